// A real OpenTelemetry Collector for tests: built from Go modules by test/otel/build.sh (cached
// under ~/.cache/skybridge, keyed by its manifest), started with OTLP receivers on free loopback
// ports (HTTP/protobuf and gRPC) and the file exporter writing OTLP-JSON lines, which spans() reads.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';
import { patience } from './patience.ts';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** One span as the collector wrote it, attributes flattened to plain values. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status: number;
  startNs: bigint;
  endNs: bigint;
  resource: Record<string, unknown>;
}

export interface RunningCollector {
  /** http://127.0.0.1:<port>: the OTLP HTTP receiver (POST /v1/traces). */
  httpUrl: string;
  /** http://127.0.0.1:<port>: the OTLP gRPC receiver. */
  grpcUrl: string;
  /** Every span written so far. */
  spans(): CollectedSpan[];
  /** The raw file the collector wrote (to prove what it does not contain). */
  raw(): string;
  stop(): Promise<void>;
}

/** Builds the collector if the cache has none for this manifest (minutes, once), and answers its path. */
export function collectorBinary(): string {
  const bin = process.env.OTELCOL_BIN;
  if (bin) return bin;
  const out = spawnSync('bash', [join(REPO, 'test', 'otel', 'build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (out.status !== 0) throw new Error('test/otel/build.sh failed (see its output above)');
  return out.stdout.trim();
}

export async function startCollector(): Promise<RunningCollector> {
  const bin = collectorBinary();
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-otelcol-'));
  const file = join(dir, 'spans.jsonl');
  const config = {
    receivers: { otlp: { protocols: { grpc: { endpoint: `127.0.0.1:${grpcPort}` }, http: { endpoint: `127.0.0.1:${httpPort}` } } } },
    exporters: { file: { path: file, flush_interval: '50ms' } },
    service: {
      pipelines: { traces: { receivers: ['otlp'], exporters: ['file'] } },
      // No metrics port of its own: parallel test files would fight over the default 8888.
      telemetry: { metrics: { level: 'none' }, logs: { level: 'warn' } },
    },
  };
  // JSON is YAML: the collector reads it as its config file.
  writeFileSync(join(dir, 'config.yaml'), JSON.stringify(config));
  const child: ChildProcess = spawn(bin, ['--config', `file:${join(dir, 'config.yaml')}`], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: dir } });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  let dead = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => ((dead = true), resolve()));
    child.once('error', (err) => ((out += `\n${err.message}`), (dead = true), resolve()));
  });
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  const limit = patience(30_000);
  const deadline = Date.now() + limit;
  for (;;) {
    if (dead) throw new Error(`the collector exited before it was ready:\n${out}`);
    try {
      // An empty export request: 200 once the HTTP receiver serves.
      const res = await fetch(`${httpUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(1000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the collector was not ready within ${limit / 1000} s:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const raw = () => (existsSync(file) ? readFileSync(file, 'utf8') : '');
  return {
    httpUrl,
    grpcUrl: `http://127.0.0.1:${grpcPort}`,
    raw,
    spans: () => parseSpans(raw()),
    stop: async () => {
      if (!dead) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

function value(v: OtlpValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

const attrs = (list: { key: string; value?: OtlpValue }[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

/** The file exporter's OTLP-JSON lines, one ExportTraceServiceRequest each. */
export function parseSpans(text: string): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const doc = JSON.parse(line) as {
      resourceSpans?: {
        resource?: { attributes?: { key: string; value?: OtlpValue }[] };
        scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; attributes?: { key: string; value?: OtlpValue }[]; status?: { code?: number }; startTimeUnixNano: string; endTimeUnixNano: string }[] }[];
      }[];
    };
    for (const rs of doc.resourceSpans ?? []) {
      const resource = attrs(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          out.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind ?? 0,
            attributes: attrs(s.attributes),
            status: s.status?.code ?? 0,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            resource,
          });
        }
      }
    }
  }
  return out;
}
