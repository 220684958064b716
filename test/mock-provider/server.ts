// The mock upstream provider: one node:http server speaking three providers' wire formats under
// /openai, /anthropic and /gemini (OpenAI also at the root /v1/...), plus the /_mock control API.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropic } from './anthropic.ts';
import { azure } from './azure.ts';
import { cohere } from './cohere.ts';
import { bedrock } from './bedrock.ts';
import { control } from './control.ts';
import { FaultQueue } from './faults.ts';
import { gemini } from './gemini.ts';
import { isMultipart, parseMultipart } from './multipart.ts';
import { openai } from './openai.ts';
import { mistral } from './mistral.ts';
import { ollama } from './ollama.ts';
import { openrouter } from './openrouter.ts';
import { vertex } from './vertex.ts';
import { serveRealtime } from './realtime.ts';
import { serveWebrtc } from './realtime-webrtc.ts';
import { metricsText, type MockLoad } from './vllm-metrics.ts';
import type {
  Fault, FormatModule, MockProvider, MockProviderOptions, RecordedRequest, Reply, RequestContext,
} from './types.ts';

export type { Fault, MockProvider, MockProviderOptions, RecordedRequest } from './types.ts';

const EMPTY_QUERY: Record<string, string> = Object.freeze({}) as Record<string, string>;
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

function parseQuery(search: string): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of new URLSearchParams(search)) out[k] = v;
  return out;
}

function resolveFormat(pathname: string): { module: FormatModule; sub: string } | undefined {
  if (pathname.startsWith('/openai/')) return { module: openai, sub: pathname.slice(7) };
  if (pathname.startsWith('/anthropic/')) return { module: anthropic, sub: pathname.slice(10) };
  if (pathname.startsWith('/gemini/')) return { module: gemini, sub: pathname.slice(7) };
  if (pathname.startsWith('/cohere/')) return { module: cohere, sub: pathname.slice(7) };
  if (pathname.startsWith('/bedrock/')) return { module: bedrock, sub: pathname.slice(8) };
  if (pathname.startsWith('/azure/')) return { module: azure, sub: pathname.slice(6) };
  if (pathname.startsWith('/vertex/')) return { module: vertex, sub: pathname.slice(7) };
  if (pathname.startsWith('/mistral/')) return { module: mistral, sub: pathname.slice(8) };
  if (pathname.startsWith('/ollama/')) return { module: ollama, sub: pathname.slice(7) };
  if (pathname.startsWith('/openrouter/')) return { module: openrouter, sub: pathname.slice(11) };
  if (pathname.startsWith('/v1/')) return { module: openai, sub: pathname };
  return undefined;
}

/** Connection reset (RST) where the platform supports it, else a plain destroy. */
function resetSocket(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

export async function startMockProvider(opts: MockProviderOptions = {}): Promise<MockProvider> {
  const host = opts.host ?? '127.0.0.1';
  const baseLatency = opts.latencyMs ?? 0;
  const chunkDelay = opts.chunkDelayMs ?? 1;
  const maxRecorded = opts.maxRecordedRequests ?? Infinity;
  const requests: RecordedRequest[] = [];
  const faults = new FaultQueue();
  const timers = new Set<NodeJS.Timeout>();
  let counter = 0;
  let requestIds = 0;
  const nextId = (): string => `mock${(++counter).toString(36).padStart(10, '0')}`;

  let load: MockLoad | null = null;
  const setLoad = (next: MockLoad | null): void => {
    load = next;
  };
  const reset = (): void => {
    faults.clear();
    requests.length = 0;
  };

  function later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  }

  /** Per-request transport state: what was recorded, and whether we cut the connection ourselves. */
  interface Exchange {
    res: ServerResponse;
    rec: RecordedRequest;
    cut: boolean;
  }

  function cut(x: Exchange): void {
    x.cut = true;
    resetSocket(x.res);
  }

  function writeStream(x: Exchange, reply: Extract<Reply, { kind: 'sse' }>, resetAfter: number | undefined): void {
    const { res, rec } = x;
    res.writeHead(200, reply.headers);
    rec.status = 200;
    const events = reply.events;
    if (resetAfter === undefined && chunkDelay === 0) {
      const body = events.join('');
      rec.responseBody = body;
      res.end(body, reply.encoding ?? 'utf8');
      return;
    }
    res.flushHeaders();
    rec.responseBody = '';
    let i = 0;
    const step = (): void => {
      if (res.destroyed) return;
      if (resetAfter !== undefined && i >= resetAfter) {
        x.cut = true;
        setImmediate(() => resetSocket(res));
        return;
      }
      if (i >= events.length) {
        res.end();
        return;
      }
      const ev = events[i++];
      rec.responseBody += ev;
      res.write(ev, reply.encoding ?? 'utf8', () => {
        if (chunkDelay > 0 && i < events.length) later(chunkDelay, step);
        else step();
      });
    };
    step();
  }

  /** A body of `bytes` bytes written 64 KiB at a time as the client reads (see Fault.oversize). */
  function writeOversize(x: Exchange, o: { bytes: number; stream?: boolean }): void {
    const { res, rec } = x;
    const head = o.stream ? 'data: "' : '{"object":"oversize","padding":"';
    res.writeHead(200, { 'content-type': o.stream ? 'text/event-stream' : 'application/json' });
    rec.status = 200;
    const filler = Buffer.alloc(64 * 1024, 'a');
    let left = o.bytes - head.length;
    // Not the bytes themselves: how many were handed to the socket.
    const note = () => (rec.responseBody = `${head}... (${o.bytes - left} of ${o.bytes} bytes written)`);
    note();
    res.once('close', note);
    res.write(head);
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const piece = left >= filler.length ? filler : filler.subarray(0, left);
        left -= piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end(o.stream ? '"\n\n' : '"}');
    };
    pump();
  }

  /** A bytes reply written 64 KiB at a time as the client reads; `resetAfter` pieces, then the socket is cut. */
  function writeBytes(x: Exchange, reply: Extract<Reply, { kind: 'bytes' }>, resetAfter: number | undefined): void {
    const { res, rec } = x;
    res.writeHead(reply.status, { 'content-length': String(reply.length), ...reply.headers });
    rec.status = reply.status;
    const PIECE = 64 * 1024;
    let offset = 0;
    let pieces = 0;
    const note = () => (rec.responseBody = `(${offset} of ${reply.length} bytes written)`);
    note();
    res.once('close', note);
    const pump = (): void => {
      while (offset < reply.length && !res.destroyed) {
        if (resetAfter !== undefined && pieces >= resetAfter) {
          x.cut = true;
          setImmediate(() => resetSocket(res));
          return;
        }
        const size = Math.min(PIECE, reply.length - offset);
        const ok = res.write(reply.piece(offset, size));
        offset += size;
        pieces++;
        if (!ok) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  }

  function send(x: Exchange, reply: Reply, delayMs: number, resetAfter: number | undefined): void {
    const go = (): void => {
      const { res, rec } = x;
      if (res.destroyed) return;
      if (reply.kind === 'sse') {
        writeStream(x, reply, resetAfter);
        return;
      }
      if (reply.kind === 'bytes') {
        writeBytes(x, reply, resetAfter);
        return;
      }
      if (resetAfter !== undefined) {
        // A mid-stream reset fault on a non-streaming answer just drops the connection.
        cut(x);
        return;
      }
      rec.status = reply.status;
      rec.responseBody = reply.body;
      res.writeHead(reply.status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(reply.body), ...reply.headers });
      res.end(reply.body);
    };
    if (delayMs > 0) later(delayMs, go);
    else go();
  }

  function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? EMPTY_QUERY : parseQuery(url.slice(q + 1));

    if (pathname.startsWith('/_mock/')) {
      const answer = control(method, pathname, raw.toString('utf8'), { faults, requests, reset, setLoad });
      const body = JSON.stringify(answer.body);
      res.writeHead(answer.status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }

    // A vLLM server's Prometheus endpoint (not recorded: scrapes are not provider requests).
    if (method === 'GET' && pathname === '/metrics') {
      const body = load ? metricsText(load) : JSON.stringify({ error: 'no metrics: none set (setLoad)' });
      res.writeHead(load ? 200 : 404, { 'content-type': load ? 'text/plain; version=0.0.4; charset=utf-8' : 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }

    const target = resolveFormat(pathname);
    if (!target) {
      const body = JSON.stringify({ error: `no mock provider at ${pathname}; use /openai, /anthropic or /gemini` });
      res.writeHead(404, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const { module, sub } = target;

    let body: unknown;
    let badJson = false;
    const contentType = req.headers['content-type'];
    if (raw.length > 0 && isMultipart(contentType)) {
      // A form is parsed for routing, recording and handlers; undefined when malformed.
      body = parseMultipart(raw, contentType as string);
    } else if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        badJson = true;
      }
    }
    const rec: RecordedRequest = { format: module.format, method, path: pathname, query, headers: req.headers, body };
    if (maxRecorded > 0) {
      if (requests.length >= maxRecorded) requests.shift();
      requests.push(rec);
    }
    // OpenAI answers every request with its own id in x-request-id (documented: "Debugging requests").
    if (module.format === 'openai') res.setHeader('x-request-id', `req_mock${(++requestIds).toString(36).padStart(8, '0')}`);
    const x: Exchange = { res, rec, cut: false };
    res.once('close', () => {
      if (!res.writableFinished && !x.cut) rec.aborted = true;
    });

    const route = module.route(method, sub, body);
    if (!route) {
      send(x, module.notFound(method, sub), baseLatency, undefined);
      return;
    }
    const ctx: RequestContext = { method, path: sub, query, headers: req.headers, body, raw, badJson, nextId };
    const fault: Fault | undefined = faults.take(module.format, route.model);
    const delay = baseLatency + (fault?.latencyMs ?? 0);
    if (fault?.status !== undefined) {
      const headers = fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : undefined;
      send(x, module.error(fault.status, fault.message, { headers }), delay, undefined);
      return;
    }
    if (fault?.dropConnection) {
      const drop = (): void => {
        x.cut = true;
        req.socket.destroy();
      };
      if (delay > 0) later(delay, drop);
      else drop();
      return;
    }
    if (fault?.reply) {
      const r = fault.reply;
      const raw: Reply = r.events
        ? { kind: 'sse', events: r.events, headers: { 'content-type': 'text/event-stream', ...r.headers } }
        : { kind: 'json', status: r.status ?? 200, body: r.body ?? '', headers: r.headers };
      send(x, raw, delay, fault.resetAfterChunks);
      return;
    }
    if (fault?.oversize) {
      later(delay, () => writeOversize(x, fault.oversize!));
      return;
    }
    const reply = module.authenticate(ctx) ?? route.handle(ctx);
    send(x, reply, delay, fault?.resetAfterChunks);
  }

  // WebRTC calls (OpenAI's and Azure's /realtime/calls), answered by a real peer.
  const webrtc = serveWebrtc();
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const path = (req.url ?? '/').split('?')[0];
        if (webrtc.handles(path)) return webrtc.handle(req, res, Buffer.concat(chunks));
        handle(req, res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      } catch (err) {
        const body = JSON.stringify({ error: `mock provider crashed: ${String(err)}` });
        if (!res.headersSent) res.writeHead(500, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }
    });
  });

  // WebSocket sessions (OpenAI Realtime, Azure realtime) on the same port.
  const realtime = serveRealtime(server, maxRecorded);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue, as the gateway has: the held-streams bench opens thousands of connections a second.
    server.listen({ port: opts.port ?? 0, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostForUrl = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    requests,
    realtime: realtime.sessions,
    webrtc: webrtc.calls,
    inject(fault: Fault): void {
      faults.add(fault);
    },
    setLoad,
    reset,
    close(): Promise<void> {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      realtime.close();
      webrtc.close();
      return new Promise((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
