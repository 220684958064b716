// Issue 26, target 4, in process: the event loop's longest stalls while a 10,000-key config.json is
// reloaded (FileConfigStore + the file watcher, as the gateway runs them). A timer every 1 ms records
// how late each turn came; a stall is that lateness. Two source trees (e.g. main and this branch)
// are measured in alternating rounds, each reload in a fresh child process, so a loaded machine
// inflates both alike and only their ratio counts.
//
//   node bench/config-reload-stalls.ts [--a /work/main] [--b .] [--rounds 5] [--keys 10000]
//
// Each child reloads twice (a cold first reload, then a warm one) and reports both.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { scaledConfig } from './lib/scaled-config.ts';
import { median } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string', default: '/work/main' },
    b: { type: 'string', default: '.' },
    rounds: { type: 'string', default: '5' },
    keys: { type: 'string', default: '10000' },
    child: { type: 'string' },
  },
  strict: true,
});

interface Reload {
  /** Longest stalls, ms, longest first. */
  top: number[];
  /** Sum of the stalls over 5 ms. */
  over5: number;
  /** From the write to the reload's end. */
  tookMs: number;
}

function configFor(keys: number, generation: number): Record<string, unknown> {
  return { providers: { openai: { keys: [{ name: 'k', value: 'sk-up', weight: 1 }] } }, ...scaledConfig(keys, 10, generation) };
}

async function child(root: string, keys: number): Promise<Reload[]> {
  const src = (m: string) => import(pathToFileURL(join(root, 'proxy/src/config', m)).href);
  const [{ loadConfigFile }, { FileConfigStore }, { ConfigService }, { SnapshotHolder }, { watchConfigFile }, { compileSnapshot }] = await Promise.all(
    ['load.ts', 'store.ts', 'service.ts', 'holder.ts', 'source.ts', 'snapshot.ts'].map(src),
  );
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-reload-stalls-'));
  try {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify(configFor(keys, 0), null, 2));
    const loaded = loadConfigFile(file);
    const store = new FileConfigStore(join(dir, 'config.store.json'));
    const stored = await ConfigService.initialDocument(store, loaded.raw, file);
    const service = new ConfigService(new SnapshotHolder(compileSnapshot(loaded.config)), store, stored, { document: loaded.raw, from: { kind: 'file', source: file } });
    let done: (() => void) | undefined;
    const watcher = watchConfigFile(file, service, (e: Error) => { throw e; }, () => done?.());
    const out: Reload[] = [];
    for (const generation of [1, 2]) {
      // The next file is written before the clock starts and renamed over config.json (as editors
      // save): the bench's own work is not the reload's.
      writeFileSync(`${file}.next`, JSON.stringify(configFor(keys, generation), null, 2));
      await new Promise((r) => setTimeout(r, 300));
      const stalls: number[] = [];
      let last = performance.now();
      const tick = setInterval(() => {
        const now = performance.now();
        stalls.push(now - last - 1);
        last = now;
      }, 1);
      const finished = new Promise<void>((r) => (done = r));
      const t0 = performance.now();
      renameSync(`${file}.next`, file);
      await finished;
      const tookMs = performance.now() - t0;
      await new Promise((r) => setTimeout(r, 20));
      clearInterval(tick);
      stalls.sort((x, y) => y - x);
      out.push({ top: stalls.slice(0, 5).map((s) => Math.round(s)), over5: Math.round(stalls.filter((s) => s > 5).reduce((a, b) => a + b, 0)), tookMs: Math.round(tookMs) });
    }
    watcher.close();
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(): void {
  const rounds = Number(values.rounds);
  const builds = [{ name: 'a', root: resolve(values.a) }, { name: 'b', root: resolve(values.b) }];
  const results = new Map<string, Reload[][]>(builds.map((b) => [b.name, []]));
  const loads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    loads.push(loadavg()[0]);
    const order = r % 2 === 0 ? builds : [...builds].reverse();
    for (const b of order) {
      const res = spawnSync(process.execPath, [import.meta.filename, '--child', b.root, '--keys', values.keys], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (res.status !== 0) throw new Error(`${b.name} (${b.root}) failed: ${res.stderr.slice(-2000)}`);
      const reloads = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as Reload[];
      results.get(b.name)!.push(reloads);
      process.stderr.write(`round ${r + 1} ${b.name}: ${reloads.map((x) => `longest ${x.top.join(', ')} ms, over 5 ms ${x.over5} ms, took ${x.tookMs} ms`).join(' | ')}\n`);
    }
  }
  const lines = [`${values.keys} keys, ${rounds} alternating rounds, load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`, '',
    '| build | reload | longest stall ms (median; rounds) | sum over 5 ms (median) | reload took ms (median) |', '|---|---|---:|---:|---:|'];
  for (const b of builds) {
    for (const [i, label] of ['cold', 'warm'].entries()) {
      const rs = results.get(b.name)!.map((x) => x[i]);
      lines.push(`| ${b.name} ${b.root} | ${label} | ${median(rs.map((x) => x.top[0]))} (${rs.map((x) => x.top[0]).join(', ')}) | ${median(rs.map((x) => x.over5))} | ${median(rs.map((x) => x.tookMs))} |`);
    }
  }
  const ratio = (i: number) => median(results.get('b')!.map((x, r) => x[i].top[0] / results.get('a')!.map((y) => y[i])[r].top[0]));
  lines.push('', `b / a, longest stall, median of per-round ratios: cold ${ratio(0).toFixed(2)}, warm ${ratio(1).toFixed(2)}`);
  process.stdout.write(lines.join('\n') + '\n');
}

if (values.child) {
  child(resolve(values.child), Number(values.keys)).then(
    (r) => {
      process.stdout.write(JSON.stringify(r) + '\n');
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
} else {
  main();
}
