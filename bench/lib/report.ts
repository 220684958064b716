// Turning runs into medians, the markdown table and docs/benchmarks.md.
import { PEERS_UNDER_TEST, type RateResult, type SaturationResult, type StreamsResult, type TargetName } from './load.ts';
import type { MockProfile } from './procs.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './stats.ts';

export interface Stat {
  n: number;
  errors: number;
  p50: number;
  p99: number;
  mean: number;
}

export interface TargetRun {
  c1?: Stat;
  ttft?: Stat;
  throughput?: SaturationResult;
  rates?: (RateResult & { cpuUsPerReq: number })[];
  /** The load phase's warm-up: a fresh process's first requests (closed loop), and its CPU per request over them. */
  warmup?: { requests: number; seconds: number; cpuUsPerReq: number };
  streams?: StreamsResult[];
  rss?: { idleMb?: number; ratesPeakMb?: number; saturationPeakMb?: number; afterLoadMb?: number; streamsPeakMb?: number };
}

export interface RunResult {
  index: number;
  targets: Partial<Record<TargetName, TargetRun>>;
  partial: boolean;
  notes: string[];
}

export interface Machine {
  date: string;
  nproc: number;
  cpuModel: string;
  memGiB: number;
  kernel: string;
  node: string;
  commit: string;
  loadTool: string;
  portkey: string;
  litellm?: string;
  /** Commit of the baseline target, when measured. */
  baseline?: string;
  runs: number;
  quick: boolean;
  gatewayWorkers: number;
  gatewayNodeFlags: string;
}

type Get = (r: RunResult, t: TargetName) => number | undefined;

interface Row {
  key: string;
  label: string;
  unit: string;
  better: 'lower' | 'higher';
  /** Per-run value for a proxy (direct gets `direct` if set, else the same getter). */
  get: Get;
  /** What the direct column shows (absolute figure), when the row is relative to direct. */
  direct?: Get;
  /** Extra text after the median, e.g. error counts. */
  extra?: (runs: RunResult[], t: TargetName) => string;
  /** Excluded from the "ahead of Portkey" comparison. */
  noCompare?: boolean;
}

const num = (x: number | undefined): number | undefined => (x === undefined || !Number.isFinite(x) ? undefined : x);

function added(pick: (tr: NonNullable<RunResult['targets'][TargetName]>) => number | undefined): { get: Get; direct: Get } {
  return {
    get: (r, t) => {
      // num(): a figure saved as NaN comes back from the results JSON as null, which is not a number to subtract.
      const a = r.targets[t] ? num(pick(r.targets[t])) : undefined;
      const d = r.targets.direct ? num(pick(r.targets.direct)) : undefined;
      return a === undefined || d === undefined ? undefined : num(a - d);
    },
    direct: (r) => (r.targets.direct ? num(pick(r.targets.direct)) : undefined),
  };
}

function sumErrors(runs: RunResult[], t: TargetName, pick: (tr: NonNullable<RunResult['targets'][TargetName]>) => number | undefined): string {
  const e = runs.map((r) => (r.targets[t] ? pick(r.targets[t]) ?? 0 : 0)).reduce((s, x) => s + x, 0);
  return e > 0 ? ` (${e} err)` : '';
}

function rateOf(tr: NonNullable<RunResult['targets'][TargetName]>, rate: number) {
  return tr.rates?.find((x) => x.rate === rate);
}

function levelOf(tr: NonNullable<RunResult['targets'][TargetName]>, n: number) {
  return tr.streams?.find((x) => x.n === n);
}

export function rowsFor(runs: RunResult[]): Row[] {
  const rates = [...new Set(runs.flatMap((r) => Object.values(r.targets).flatMap((t) => t?.rates?.map((x) => x.rate) ?? [])))].sort((a, b) => a - b);
  const levels = [...new Set(runs.flatMap((r) => Object.values(r.targets).flatMap((t) => t?.streams?.map((x) => x.n) ?? [])))].sort((a, b) => a - b);
  const rows: Row[] = [
    { key: 'c1_p50', label: 'Added latency, c=1, p50', unit: 'ms', better: 'lower', ...added((t) => t.c1?.p50), extra: (rs, t) => sumErrors(rs, t, (x) => x.c1?.errors) },
    { key: 'c1_p99', label: 'Added latency, c=1, p99', unit: 'ms', better: 'lower', ...added((t) => t.c1?.p99) },
    {
      key: 'rps', label: 'Throughput at saturation (20 ms upstream)', unit: 'req/s', better: 'higher',
      get: (r, t) => num(r.targets[t]?.throughput?.rps),
      extra: (rs, t) => sumErrors(rs, t, (x) => (x.throughput ? x.throughput.non2xx + x.throughput.socketErrors : 0)),
    },
  ];
  for (const rate of rates) {
    rows.push({
      key: `rate${rate}_p99`, label: `Added p99 at ${rate} req/s (20 ms upstream)`, unit: 'ms', better: 'lower',
      ...added((t) => rateOf(t, rate)?.latency.p99),
    });
    rows.push({
      key: `rate${rate}_achieved`, label: `Achieved rate at ${rate} req/s`, unit: 'req/s', better: 'higher',
      get: (r, t) => num(r.targets[t] && rateOf(r.targets[t], rate)?.achievedRps),
      extra: (rs, t) => sumErrors(rs, t, (x) => rateOf(x, rate)?.errors),
    });
  }
  const cpuRate = rates.includes(1000) ? 1000 : rates[Math.floor(rates.length / 2)];
  if (cpuRate !== undefined) {
    rows.push({
      key: 'cpu', label: `CPU per request at ${cpuRate} req/s (direct: the mock's own)`, unit: 'µs', better: 'lower',
      get: (r, t) => num(r.targets[t] && rateOf(r.targets[t], cpuRate)?.cpuUsPerReq),
    });
  }
  if (runs.some((r) => Object.values(r.targets).some((t) => t?.warmup))) {
    rows.push({
      key: 'cpu_warmup', label: 'CPU per request over a fresh process\'s first requests (the warm-up; direct: the mock\'s own)', unit: 'µs', better: 'lower',
      get: (r, t) => num(r.targets[t]?.warmup?.cpuUsPerReq),
    });
  }
  rows.push(
    { key: 'ttft_p50', label: 'Added time to first token, p50', unit: 'ms', better: 'lower', ...added((t) => t.ttft?.p50), extra: (rs, t) => sumErrors(rs, t, (x) => x.ttft?.errors) },
    { key: 'ttft_p99', label: 'Added time to first token, p99', unit: 'ms', better: 'lower', ...added((t) => t.ttft?.p99) },
  );
  for (const n of levels) {
    rows.push({
      key: `streams${n}`, label: `${n} held streams: stall-free completed`, unit: 'streams', better: 'higher',
      get: (r, t) => {
        const l = r.targets[t] && levelOf(r.targets[t], n);
        return l ? l.completed - l.stalled : undefined;
      },
      extra: (rs, t) => {
        const ls = rs.map((r) => (r.targets[t] ? levelOf(r.targets[t], n) : undefined)).filter((x) => x !== undefined);
        if (ls.length === 0) return '';
        const stalls = median(ls.map((l) => l.stalled));
        const failed = median(ls.map((l) => l.failed));
        const gap = median(ls.map((l) => l.maxGapMs));
        const last = median(ls.map((l) => l.lastTtftMs ?? Number.NaN).filter((x) => Number.isFinite(x)));
        const cpu = median(ls.map((l) => l.cpuMsPerStream ?? Number.NaN).filter((x) => Number.isFinite(x)));
        return ` (stalls ${stalls}, failed ${failed}, max gap ${fmt(gap, 'ms')} ms, last stream's first byte ${fmt(last, 'ms')} ms`
          + `${Number.isFinite(cpu) ? `, CPU ${cpu.toFixed(2)} ms per stream` : ''})`;
      },
    });
  }
  rows.push(
    {
      key: 'streams_max', label: 'Max stall-free concurrent streams (of levels tried)', unit: 'streams', better: 'higher',
      get: (r, t) => {
        let best = 0;
        for (const l of r.targets[t]?.streams ?? []) {
          if (!l.stallFree) break;
          best = l.n;
        }
        return r.targets[t]?.streams ? best : undefined;
      },
    },
    { key: 'rss_idle', label: 'RSS idle', unit: 'MB', better: 'lower', get: (r, t) => num(r.targets[t]?.rss?.idleMb) },
    { key: 'rss_rates', label: 'RSS peak at the fixed rates (steady load)', unit: 'MB', better: 'lower', get: (r, t) => num(r.targets[t]?.rss?.ratesPeakMb) },
    { key: 'rss_streams', label: 'RSS peak holding streams', unit: 'MB', better: 'lower', get: (r, t) => num(r.targets[t]?.rss?.streamsPeakMb) },
    { key: 'rss_sat', label: 'RSS peak at saturation', unit: 'MB', better: 'lower', get: (r, t) => num(r.targets[t]?.rss?.saturationPeakMb) },
    { key: 'rss_after', label: 'RSS 2 s after saturation', unit: 'MB', better: 'lower', get: (r, t) => num(r.targets[t]?.rss?.afterLoadMb), noCompare: true },
  );
  return rows;
}

function fmt(x: number | undefined, unit: string): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  if (unit === 'ms') return Math.abs(x) < 10 ? x.toFixed(2) : x.toFixed(1);
  if (unit === 'MB') return x.toFixed(1);
  return Math.round(x).toLocaleString('en-US');
}

/** Median over runs of a row's value for a target (direct gets its absolute figure). */
export function medianOf(row: Row, runs: RunResult[], t: TargetName): number | undefined {
  const get = t === 'direct' && row.direct ? row.direct : row.get;
  const vals = runs.map((r) => get(r, t)).filter((v): v is number => v !== undefined);
  return vals.length ? median(vals) : undefined;
}

export function renderTable(runs: RunResult[], targets: TargetName[]): string {
  const rows = rowsFor(runs);
  const head = `| Figure | unit | ${targets.map((t) => (t === 'direct' ? 'direct (absolute)' : t)).join(' | ')} |`;
  const sep = `|---|---|${targets.map(() => '---:').join('|')}|`;
  const lines = [head, sep];
  for (const row of rows) {
    const cells = targets.map((t) => {
      if (t === 'direct' && (row.key === 'cpu' || row.key === 'cpu_warmup')) return fmt(medianOf(row, runs, t), row.unit) + ' (mock)';
      const v = medianOf(row, runs, t);
      return fmt(v, row.unit) + (row.extra ? row.extra(runs, t) : '');
    });
    lines.push(`| ${row.label} | ${row.unit} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n') + '\n\n' + renderTargets(runs, targets);
}

interface Check {
  goal: string;
  measured: string;
  pass: boolean | undefined;
}

export function checks(runs: RunResult[], targets: TargetName[]): Check[] {
  const rows = rowsFor(runs);
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const m = (key: string, t: TargetName) => {
    const row = byKey.get(key);
    return row && targets.includes(t) ? medianOf(row, runs, t) : undefined;
  };
  const out: Check[] = [];
  /** `num`'s median over `den`'s, held to `limit` (issue 26's targets are such ratios, both measured in the same run). */
  const pair = (num: TargetName, den: TargetName, key: string, unit: string, goal: string, limit: number, dir: 'le' | 'ge') => {
    const v = m(key, num);
    const d = m(key, den);
    if (v === undefined || d === undefined) {
      out.push({ goal, measured: 'not measured', pass: undefined });
      return;
    }
    const measured = `${num} ${fmt(v, unit)} ${unit} vs ${den} ${fmt(d, unit)} ${unit}`;
    if (d <= 0) {
      // A figure at or below zero is noise (added latency cannot be negative): no verdict.
      out.push({ goal, measured: `${measured} (${den} figure ≤ 0, within noise: no verdict)`, pass: undefined });
      return;
    }
    out.push({ goal, measured: `${measured} (${(v / d).toFixed(2)}×)`, pass: dir === 'le' ? v <= limit * d : v >= limit * d });
  };
  const ratio = (key: string, unit: string, goal: string, limit: number, dir: 'le' | 'ge') => pair('gateway', 'floor', key, unit, goal, limit, dir);
  // Issue 26, target 1: the plain gateway against the floor and against the baseline build.
  ratio('cpu', 'µs', 'CPU per request ≤ 1.25× floor', 1.25, 'le');
  ratio('rps', 'req/s', 'Throughput ≥ 0.85× floor', 0.85, 'ge');
  ratio('c1_p50', 'ms', 'Added latency p50 ≤ 1.2× floor', 1.2, 'le');
  ratio('c1_p99', 'ms', 'Added latency p99 ≤ 1.2× floor', 1.2, 'le');
  ratio('ttft_p50', 'ms', 'Added TTFT p50 ≤ 1.5× floor', 1.5, 'le');
  ratio('ttft_p99', 'ms', 'Added TTFT p99 ≤ 1.5× floor', 1.5, 'le');
  if (targets.includes('baseline')) {
    pair('gateway', 'baseline', 'cpu', 'µs', 'CPU per request ≤ 0.8× the baseline build', 0.8, 'le');
    pair('gateway', 'baseline', 'c1_p50', 'ms', 'Added latency p50 ≤ 1.05× the baseline build', 1.05, 'le');
  }
  // Issue 26, target 5: enabled features against the plain gateway in the same run.
  const vsGateway = (t: TargetName, key: string, unit: string, goal: string, limit: number, dir: 'le' | 'ge') => {
    if (targets.includes(t)) pair(t, 'gateway', key, unit, goal, limit, dir);
  };
  vsGateway('logging', 'cpu', 'µs', 'Logging on (SQLite): CPU per request ≤ 1.10× logging off', 1.1, 'le');
  vsGateway('logging', 'rps', 'req/s', 'Logging on (SQLite): throughput ≥ 0.95× logging off', 0.95, 'ge');
  vsGateway('logging-pg', 'cpu', 'µs', 'Logging on (PostgreSQL): CPU per request ≤ 1.10× logging off', 1.1, 'le');
  vsGateway('logging-pg', 'rps', 'req/s', 'Logging on (PostgreSQL): throughput ≥ 0.9× logging off', 0.9, 'ge');
  // A hit against a miss: the plain gateway is the miss (the same request, answered upstream).
  vsGateway('cache-hit', 'cpu', 'µs', 'Cache hit: CPU per request ≤ 0.6× a miss', 0.6, 'le');
  vsGateway('cache-hit', 'rps', 'req/s', 'Cache hit throughput ≥ 2× plain gateway (20 ms upstream)', 2, 'ge');
  vsGateway('cache-hit', 'c1_p50', 'ms', 'Cache direct hit added latency p50 ≤ 1.2× plain gateway miss', 1.2, 'le');
  vsGateway('cache-bypass', 'cpu', 'µs', 'Cache on but bypassed (no key): CPU per request within 3% of cache off', 1.03, 'le');
  vsGateway('governed', 'rps', 'req/s', 'Governed (in-process) throughput ≥ 0.9× plain gateway', 0.9, 'ge');
  vsGateway('governed', 'c1_p50', 'ms', 'Governed (in-process) added latency p50 ≤ 1.15× plain gateway', 1.15, 'le');
  vsGateway('governed-redis', 'cpu', 'µs', 'Governed (Redis counters): CPU per request ≤ 1.5× plain gateway', 1.5, 'le');
  vsGateway('governed-redis', 'c1_p50', 'ms', 'Governed (Redis counters) added latency p50 ≤ 1.5× plain gateway', 1.5, 'le');
  const smax = m('streams_max', 'gateway');
  const tried = Math.max(0, ...runs.flatMap((r) => r.targets.gateway?.streams?.map((l) => l.n) ?? []));
  // The Nth stream's first byte at the level the target names, and the RSS holding streams (the peak over every level tried).
  const at4096 = runs.map((r) => r.targets.gateway?.streams?.find((l) => l.n === 4096)?.lastTtftMs).filter((x): x is number => x !== undefined && Number.isFinite(x));
  const lastTtft = at4096.length ? median(at4096) : undefined;
  const heldRss = m('rss_streams', 'gateway');
  out.push({
    goal: '≥ 4,096 concurrent stall-free streams at ≤ 450 MB RSS, the 4,096th stream\'s first byte < 2 s',
    measured: smax === undefined ? 'not measured'
      : `${fmt(smax, 'streams')} stall-free (highest level tried ${fmt(tried, 'streams')}); RSS peak ${fmt(heldRss, 'MB')} MB; 4,096th stream's first byte ${fmt(lastTtft, 'ms')} ms`,
    pass: smax === undefined ? undefined : smax >= 4096 && heldRss !== undefined && heldRss <= 450 && lastTtft !== undefined && lastTtft < 2000,
  });
  const rssRates = m('rss_rates', 'gateway');
  const floorRates = m('rss_rates', 'floor');
  // Held streams have their own RSS bound (450 MB at 4,096 streams, above).
  out.push({
    goal: 'RSS < 150 MB steady (fixed rates)',
    measured: rssRates === undefined ? 'not measured'
      : `peak ${fmt(rssRates, 'MB')} MB at fixed rates; idle ${fmt(m('rss_idle', 'gateway'), 'MB')} MB, `
        + `saturation ${fmt(m('rss_sat', 'gateway'), 'MB')} MB (floor at fixed rates: ${fmt(floorRates, 'MB')} MB)`,
    pass: rssRates === undefined ? undefined : rssRates < 150,
  });
  const idle = m('rss_idle', 'gateway');
  out.push({ goal: 'RSS idle ≤ 90 MB', measured: idle === undefined ? 'not measured' : `${fmt(idle, 'MB')} MB (floor ${fmt(m('rss_idle', 'floor'), 'MB')} MB)`, pass: idle === undefined ? undefined : idle <= 90 });
  const after = m('rss_after', 'gateway');
  out.push({
    goal: 'RSS after saturation ≤ 160 MB',
    measured: after === undefined ? 'not measured' : `${fmt(after, 'MB')} MB 2 s after ${fmt(m('rss_sat', 'gateway'), 'MB')} MB peak (floor ${fmt(m('rss_after', 'floor'), 'MB')} MB)`,
    pass: after === undefined ? undefined : after <= 160,
  });
  for (const peer of PEERS_UNDER_TEST) {
    if (!targets.includes(peer) || !targets.includes('gateway')) continue;
    const behind: string[] = [];
    let compared = 0;
    for (const row of rows) {
      if (row.noCompare) continue;
      const g = medianOf(row, runs, 'gateway');
      const p = medianOf(row, runs, peer);
      if (g === undefined || p === undefined) continue;
      compared++;
      // A latency measured over failed requests is no latency: a peer that could not keep a rate
      // (under 90% of it answered) is behind there, whatever its percentile says.
      const rate = /^rate(\d+)_p99$/.exec(row.key);
      const achieved = rate ? medianOf(byKey.get(`rate${rate[1]}_achieved`)!, runs, peer) : undefined;
      if (rate && (achieved === undefined || achieved < 0.9 * Number(rate[1]))) continue;
      const ahead = row.better === 'lower' ? g <= p : g >= p;
      if (!ahead) behind.push(`${row.label} (${fmt(g, row.unit)} vs ${fmt(p, row.unit)})`);
    }
    out.push({
      goal: `Ahead of ${peer} on every figure`,
      measured: behind.length ? `behind on ${behind.length}/${compared}: ${behind.join('; ')}` : `ahead on all ${compared}`,
      pass: compared ? behind.length === 0 : undefined,
    });
  }
  return out;
}

function renderTargets(runs: RunResult[], targets: TargetName[]): string {
  const lines = ['| Target (gateway) | Measured (medians) | Result |', '|---|---|---|'];
  for (const c of checks(runs, targets)) lines.push(`| ${c.goal} | ${c.measured} | ${c.pass === undefined ? '–' : c.pass ? 'PASS' : '**FAIL**'} |`);
  return lines.join('\n') + '\n';
}

/** Per-run values of the headline figures, to show the spread behind each median. */
function renderSpread(runs: RunResult[], targets: TargetName[]): string {
  const keys = ['c1_p50', 'c1_p99', 'rps', 'rate1000_p99', 'rate2000_p99', 'cpu', 'ttft_p50', 'ttft_p99', 'rss_rates'];
  const rows = rowsFor(runs).filter((r) => keys.includes(r.key));
  const proxies = targets.filter((t) => t !== 'direct');
  const lines = [
    `| Figure | ${proxies.map((t) => `${t} (run 1, 2, …)`).join(' | ')} |`,
    `|---|${proxies.map(() => '---').join('|')}|`,
  ];
  for (const row of rows) {
    const cells = proxies.map((t) => runs.map((r) => fmt(row.get(r, t), row.unit)).join(', '));
    lines.push(`| ${row.label} (${row.unit}) | ${cells.join(' | ')} |`);
  }
  return lines.join('\n') + '\n';
}

/** How much each phase measures (full and quick runs differ only here). */
export interface Plan {
  /**
   * Before the c=1 and load phases measure, each fresh process serves this many requests (closed loop,
   * at most maxSeconds; streams: streaming ones too, in the c=1 phase) so every target is measured with
   * its code optimized, as a long-running proxy is. Absent in results from before 2026-11-28 (measured cold).
   */
  warm?: { requests: number; streams: number; concurrency: number; maxSeconds: number };
  seq: { warmup: number; requests: number; blocks: number };
  ttft: { warmup: number; requests: number; blocks: number };
  satConnections: number;
  satWarmupS: number;
  satDurationS: number;
  rates: number[];
  rateWarmupMs: number;
  rateDurationMs: number;
  drainMs: number;
  streamLevels: number[];
  streamRampMs: number;
  stallMs: number;
  /** A first byte later than this is a stall too (older results: stallMs counted from sending). */
  firstByteStallMs?: number;
  streamTimeoutMs: number;
  /** Hard limit for one whole run (all profiles, all targets). */
  runLimitMs: number;
}

export interface DocsInput {
  machine: Machine;
  runs: RunResult[];
  targets: TargetName[];
  plan: Plan;
  profiles: Record<'c1' | 'load' | 'streams', MockProfile>;
  jsonName: string;
}

export function renderDocs(d: DocsInput): string {
  const { machine: mc, plan: p, profiles: pr } = d;
  const notes = d.runs.flatMap((r) => r.notes.map((n) => `run ${r.index}: ${n}`));
  return `# Benchmarks

Skybridge against the floor (the least a Node passthrough can do), Portkey's open-source gateway,
LiteLLM's proxy, and the mock upstream called directly — side by side, in one run, on one machine.

_Generated by \`npm run bench\` (\`bench/run.ts\`) on ${mc.date.slice(0, 10)}; raw results in \`${d.jsonName}\` (git-ignored)._

| Machine | |
|---|---|
| CPU | ${mc.nproc} × ${mc.cpuModel} |
| Memory | ${mc.memGiB} GiB |
| Kernel | Linux ${mc.kernel} |
| Node | ${mc.node} |
| Skybridge commit | ${mc.commit} (${mc.gatewayWorkers === 1 ? 'single process' : `${mc.gatewayWorkers} workers`}${mc.gatewayNodeFlags ? `, node ${mc.gatewayNodeFlags}` : ''}) |
| Load tool (saturation) | ${mc.loadTool}; everything else: the harness's own undici clients |
| Peers | ${mc.portkey}${mc.litellm ? `; ${mc.litellm}` : ''} |${mc.baseline ? `\n| Baseline build | ${mc.baseline} |` : ''}
| Runs | ${mc.runs}${mc.quick ? ' (quick)' : ''}; every figure is the median over runs |

The machine is small and noisy: the load generator, the mock upstream and the proxy under test
share the same ${mc.nproc} cores, so absolute numbers are low and move by several percent between
runs. Compare columns within one table, not against other machines.

## Results

Latency figures for floor, gateway and Portkey are **added** latency: the target's percentile
minus the direct (mock-only) percentile of the same run. The direct column shows the direct
figure itself.

${renderTable(d.runs, d.targets)}
### Spread across runs

${renderSpread(d.runs, d.targets)}
${notes.length ? `### Notes from this run\n\n${notes.map((n) => `- ${n}`).join('\n')}\n` : ''}
${featureResults()}
## Targets under test

- **direct** — the mock upstream (\`test/mock-provider/main.ts\`) called straight, \`POST /openai/v1/chat/completions\`.
- **floor** — \`bench/floor.ts\`: node:http + an undici keep-alive Pool; reads the body, \`JSON.parse\`,
  strips the \`openai/\` model prefix, forwards, and pipes the answer back (SSE included). No validation,
  retries, metrics or logs. Anything the gateway adds shows up as distance from this column.
- **gateway** — Skybridge (\`proxy/src/main.ts --log-level warn\`), one provider \`openai\` whose
  \`base_url\` is the mock, model \`openai/gpt-4o\`.
- **baseline** — the gateway built from an older commit, \`cb05528\` unless \`--baseline <ref>\` names
  another (\`--no-baseline\` skips it): a git worktree under \`bench/.peers\` sharing this checkout's
  \`node_modules\`, same config as **gateway**, so the old build and the new one are measured in every run.
  \`cb05528\` is the last build before the hardening, the stage pipeline and the later features; issue 26
  holds the plain gateway to at most 0.8× its CPU per request.
- **logging** / **logging-pg** — **gateway** with request logs on (\`client.enable_logging\`, content logging
  off) into the embedded SQLite file / a throw-away PostgreSQL server on loopback.
- **cache-hit** / **cache-bypass** — **gateway** with the response cache on (direct-only, the embedded
  SQLite store): cache-hit sends \`x-bf-cache-key\`, so every request after the first is answered from
  the cache; cache-bypass sends none, so the cache stage runs and steps aside.
- **governed** / **governed-redis** — a virtual key with provider configs, budgets and rate limits on the key
  and its team, and ten CEL routing rules that all evaluate and none match; counters in process / in Redis.
- **litellm** — LiteLLM's proxy (\`litellm[proxy]\` from PyPI, in a virtualenv under \`bench/.peers\`), one
  worker, no database, one model \`gpt-4o\` routed to the mock as an OpenAI upstream.
- **portkey** — \`@portkey-ai/gateway\` ${PORTKEY_LABEL(mc.portkey)} from npm, run with \`NODE_ENV=production --headless\`,
  addressed with \`x-portkey-provider: openai\` and \`x-portkey-custom-host: <mock>/openai/v1\`.
  Its \`@hono/node-server\` dependency is pinned to 1.14.1: with newer versions every Portkey
  streaming answer fails with \`TypeError: immutable\` (Portkey-AI/gateway#1389). Note that Portkey
  deliberately waits 25 ms before relaying the first chunk of an OpenAI stream; that shows in its TTFT.

All processes listen on 127.0.0.1 only (Portkey binds all interfaces by default; the harness
preloads \`bench/lib/loopback.ts\` to pin it to loopback). Each is a plain child process of the harness,
started fresh for each group of phases below.

## Reading the numbers

- **RSS.** On this machine (${mc.memGiB} GiB) V8 lets the young generation grow to 2 × 64 MB
  semi-spaces, and Node itself, the TypeScript type stripper and undici's wasm HTTP parser take
  ~100 MB before any request; so every Node proxy, the floor included, sits far above its idle RSS
  under load. The floor runs as TypeScript (type stripping loads the stripper: ~27 MB); the gateway
  runs the emitted JavaScript with \`--max-semi-space-size=8\` (from \`npm start\`). Compare the gateway
  with the floor column.

### Where the gateway's idle memory goes

Measured on the built gateway right after start (three requests, then a full GC), default
configuration, with \`/proc/<pid>/smaps\` and V8's heap statistics:

| part | resident MB | why it stays |
|---|---:|---|
| the node binary's pages (file-backed) | 49 | Node's own code; a bare \`node\` HTTP server touches 39 MB of it, the gateway's use of more builtins (crypto, zlib, worker threads, wasm) the rest |
| V8 heap, committed | 35 | 23 MB live: compiled functions and bytecode of the modules loaded at start, their source text (V8 keeps it; ~14 MB of strings), the ajv-compiled config validators and the snapshot; young generation back to 1 MB when idle |
| other native memory | 29 | V8 code and metadata spaces, undici's llhttp wasm memory, OpenSSL and ICU tables, libuv and thread stacks, malloc arenas |
| **total** | **~117** (bare Node HTTP server: 47) | |

What was taken out: the Redis and PostgreSQL clients, Bedrock's signer and event-stream codec, busboy,
the MCP SDK (with zod) and the management API (express) are loaded on first use (\`proxy/src/lazy.ts\`,
dynamic imports), 11.5 MB less resident at idle than loading them at start (128.5 → 117 MB), and
the features added since (cache, webhooks, async jobs, MCP) cost nothing resident until configured.
Since then (issue 26) the stores, MCP call logs, webhook delivery, async job workers, the YAML parser,
undici's index and the operations' request validators load only when used (131 → 124 MB idle; the
breakdown by module group is under Feature benchmarks, "Memory and held streams"). Below 90 MB idle
would need the module code itself to shrink (a bundled, minified build, so V8 holds less source and
bytecode; TypeBox and ajv, 10 MB together, only for the config check): not done.
- **Gateway stream gaps.** The gateway asks the upstream for \`stream_options.include_usage\` (to
  count tokens) and drops the usage chunk the client did not ask for; the mock paces that extra
  event like a token, so the gateway's \`[DONE]\` arrives one event interval later and its largest
  gap between bytes is about twice the mock's event interval. That is not a stall.
- **LiteLLM with one worker** (as measured here: no database, \`--num_workers 1\`) cannot keep 500 req/s on
  this machine: most requests at the fixed rates and at saturation fail or time out, so its added p99
  there is computed over the few that answered and is not comparable (the comparison counts those
  rates as behind). Its c=1, TTFT, CPU and memory figures are.
- **Added p99 can be negative** for a single run when the direct run happened to be noisier; the
  medians over runs, and the per-run spread below, are what to read.
- **Fixed rates near the box's limit.** At 2,000 req/s the load generator, the mock and the proxy
  together need most of the ${mc.nproc} cores; the added p99 there mixes the proxy's cost with CPU contention.

## Method

Every request is an OpenAI chat completion with a two-word prompt (\`max_tokens: 64\`); the mock
answers \`Mock reply to: …\` with one SSE event per word when streaming.

| Phase | Upstream (mock) | What is measured |
|---|---|---|
| Warm-up | as the phase's | ${p.warm ? `Before the c=1 and the load phases measure, each fresh proxy serves ${p.warm.requests.toLocaleString('en-US')} requests (closed loop, ${p.warm.concurrency} connections, at most ${p.warm.maxSeconds} s; in the c=1 phase then ${p.warm.streams.toLocaleString('en-US')} streaming ones), so every target is measured with its code optimized, as a long-running proxy is. The load phase's warm-up is also a figure: CPU per request over a fresh process's first requests.` : 'None: each phase measured fresh processes (cold).'} |
| Latency, c=1 | ${pr.c1.latencyMs} ms to first byte | ${p.seq.warmup} warm-up + ${p.seq.requests} sequential JSON requests per target on one keep-alive connection; targets interleaved in blocks so noise drifts hit all alike. p50/p99 of the full round trip; the table shows target − direct. |
| Time to first token | ${pr.c1.latencyMs} ms, ${pr.c1.chunkDelayMs} ms between events | ${p.ttft.warmup} warm-up + ${p.ttft.requests} sequential streaming requests; time from sending the request to the first body chunk containing \`data:\`; streams are read to \`[DONE]\`. Table shows target − direct. |
| Throughput | ${pr.load.latencyMs} ms | Closed loop, ${p.satConnections} connections, ${p.satWarmupS} s warm-up then ${p.satDurationS} s, ${mc.loadTool.startsWith('wrk') ? 'wrk with one thread (C, so it steals less CPU than a Node generator)' : 'autocannon in a child process'}. Figure: 2xx answers per second. |
| Fixed rate | ${pr.load.latencyMs} ms | Open loop at ${p.rates.join(', ')} req/s for ${p.rateDurationMs / 1000} s after ${p.rateWarmupMs / 1000} s warm-up: request *i* is sent at *start + i/rate* whatever happened to earlier ones, and its latency counts from that scheduled time (no coordinated omission). Up to 1,024 connections. "Achieved" counts 2xx answers completed inside the window; errors are non-2xx, failures and answers still missing 2 s after the window. Figure: target p99 − direct p99. |
| CPU per request | ${pr.load.latencyMs} ms | The proxy's user+system CPU time (from /proc) over the fixed-rate phase divided by requests sent. The least noisy efficiency figure on a shared box. |
| Held streams | ${pr.streams.latencyMs} ms, ${pr.streams.chunkDelayMs} ms between events (~4 s per stream) | N = ${p.streamLevels.join(', ')} streaming requests opened evenly over ${p.streamRampMs / 1000} s, one connection each, all held until \`[DONE]\` (deadline ${p.streamTimeoutMs / 1000} s). A **stall** is a gap of more than ${p.stallMs / 1000} s with no bytes once the first byte came, or a first byte more than ${(p.firstByteStallMs ?? p.stallMs) / 1000} s after sending the request (issue 26's definition). A level is stall-free when every stream completed with no stall; the time to the first byte of the last stream opened is reported with each level. |
| RSS | — | VmRSS from /proc/<pid>/status (summed over the process tree, ready for cluster mode), sampled every 200 ms: idle = after 20 requests and 1 s quiet; peak over the fixed-rate phases (steady load), over saturation, and while holding streams; "after" = 2 s after saturation ended. |

What the numbers mean:

- **Added latency (c=1)** is the gateway's own cost per request when nothing else is happening:
  parsing, routing, rewriting, one hop on loopback, relaying the answer.
- **Throughput at saturation** is how many requests per second the proxy can push through with a
  20 ms upstream before its CPU is the limit (on this box: the CPU left after the load generator
  and the mock take theirs).
- **Added p99 at a fixed rate** is the tail the proxy adds at a realistic, steady load; it grows
  as the rate approaches the saturation figure.
- **Added TTFT** is how much later the first token reaches the client than it would without the proxy.
- **Held streams** shows whether the proxy keeps many slow, long-lived streams flowing
  (memory per stream, per-chunk work, event-loop fairness).

## Running it

\`\`\`sh
npm run bench                    # 3 full runs (~15 min), writes this file and bench/results/<stamp>.json
npm run bench -- --quick         # one short run (< 3 min); prints the table, leaves this file alone
npm run bench -- --runs 5 --targets floor,gateway   # the baseline (cb05528) is measured too
npm run bench -- --quick --targets floor,gateway --baseline HEAD~1   # A/B against the previous commit
npm run bench -- --no-baseline   # skip the baseline build
npm run bench -- --quick --warm-requests 0   # measure fresh processes cold, as runs before 2026-11-28 did
node bench/warmup.ts             # a fresh process's CPU per request round by round, split by thread
npm run bench -- --gateway-workers 2   # cluster mode, once the gateway has it (see startGateway in bench/lib/procs.ts)
npm run bench -- --render bench/results/<stamp>.json   # rebuild this file from saved results
npx node bench/profile.ts [--target floor] [--stream]  # CPU profile under load: top self-time functions
node bench/ab.ts --builds floor,git-44b1b11,current --rounds 5   # paired CPU per request: the floor, a commit, this checkout
node bench/ab.ts --no-build --builds git-44b1b11,git-44b1b11+cache-hit,current,current+cache-hit --rounds 5   # cache hit / miss, paired
npm run bench -- --runs 1 --targets gateway --phases streams --no-baseline   # held streams only (no peers installed)
node bench/memory.ts imports     # RSS of each group of modules the gateway loads
node bench/memory.ts run --configs plain,logging --flags "|--max-semi-space-size=2"   # RSS idle, at and after saturation
node bench/memory.ts run --env "|SKYBRIDGE_MEMORY_TRIM=0.5"   # the same gateway without and with --memory-trim
\`\`\`

The harness installs Portkey (and autocannon, the fallback load tool) into \`bench/.peers/\` on
first use (its \`node_modules\` is git-ignored; \`package.json\` and the lock file pin the versions).
\`wrk\` is used when installed (\`apt-get install wrk\`); the harness needs Node 24 (\`npx node\`).
`;
}

/** The feature scripts' figures (bench/features.md, kept by hand from their output), shown after the main table. */
function featureResults(): string {
  try {
    return readFileSync(join(import.meta.dirname, '..', 'features.md'), 'utf8');
  } catch {
    return '';
  }
}

function PORTKEY_LABEL(s: string): string {
  return /gateway (\S+)/.exec(s)?.[1] ?? '';
}
