// A live reload of config.json (config/source.ts → ConfigService.reseed): a large file is read,
// checked and compiled in steps with the event loop free between them, and the new snapshot is
// swapped in whole at the end; a bad edit is refused and the last good configuration keeps
// serving; objects written through /api stay laid over the new seed; and the file store does not
// read back its own writes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FSWatcher } from 'node:fs';
import { loadConfigFile } from '../../proxy/src/config/load.ts';
import { compileSnapshot, compileSnapshotInSteps } from '../../proxy/src/config/snapshot.ts';
import { ConfigService } from '../../proxy/src/config/service.ts';
import { SnapshotHolder } from '../../proxy/src/config/holder.ts';
import { FileConfigStore } from '../../proxy/src/config/store.ts';
import { watchConfigFile } from '../../proxy/src/config/source.ts';
import { ConfigError } from '../../proxy/src/config/check.ts';
import { findVirtualKey } from '../../proxy/src/config/governance-runtime.ts';
import { eventually, patience } from '../helpers/patience.ts';

const dirs: string[] = [];
const watchers: FSWatcher[] = [];
after(() => {
  for (const w of watchers) w.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A governed configuration of `keys` virtual keys whose budgets all have limit 1000 + generation. */
function config(keys: number, generation: number): Record<string, unknown> {
  const budgets = [];
  const virtualKeys = [];
  for (let i = 0; i < keys; i++) {
    budgets.push({ id: `b-${i}`, max_limit: 1000 + generation, reset_duration: '1M' });
    virtualKeys.push({ id: `vk-${i}`, name: `key ${i}`, value: `sk-bf-reload-${i}`, budget_id: `b-${i}`, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], weight: 1 }] });
  }
  return {
    providers: { openai: { keys: [{ name: 'k', value: 'sk-up', weight: 1 }] } },
    governance: { budgets, virtual_keys: virtualKeys },
    client: { enforce_auth_on_inference: true },
  };
}

interface Running {
  file: string;
  service: ConfigService;
  reloads: number;
  errors: Error[];
}

async function start(doc: Record<string, unknown>): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-reload-'));
  dirs.push(dir);
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(doc, null, 2));
  const loaded = loadConfigFile(file);
  const store = new FileConfigStore(join(dir, 'config.store.json'));
  const run: Running = { file, service: undefined as unknown as ConfigService, reloads: 0, errors: [] };
  const stored = await ConfigService.initialDocument(store, loaded.raw, file);
  run.service = new ConfigService(new SnapshotHolder(compileSnapshot(loaded.config)), store, stored, { document: loaded.raw, from: { kind: 'file', source: file } });
  watchers.push(watchConfigFile(file, run.service, (e) => run.errors.push(e), () => run.reloads++));
  return run;
}

/** The budget limits a snapshot serves, as one set (a mixed snapshot would show two values). */
const limitsOf = (run: Running) => new Set([...run.service.current().governance.budgets.values()].map((b) => b.max_limit));

test('a reload of 5,000 keys lets the event loop run between its steps, and every turn sees the old or the new snapshot whole', async () => {
  const run = await start(config(5000, 0));
  const first = run.service.current();
  const seen: string[] = [];
  writeFileSync(run.file, JSON.stringify(config(5000, 1), null, 2));
  const deadline = Date.now() + patience(30_000);
  // One check per event-loop turn, as a request arriving during the reload would run.
  while (run.reloads === 0 && run.errors.length === 0 && Date.now() < deadline) {
    const limits = limitsOf(run);
    assert.equal(limits.size, 1, 'a snapshot mixes two generations');
    seen.push(`${run.service.current().hash}:${[...limits][0]}`);
    await nextTurn();
  }
  assert.deepEqual(run.errors, []);
  assert.equal(run.reloads, 1);
  const now = run.service.current();
  assert.notEqual(now.hash, first.hash);
  assert.deepEqual([...limitsOf(run)], [1001]);
  // Only the two snapshots were ever served, each whole: the old one until the swap, then the new one.
  const served = [...new Set(seen)];
  assert.deepEqual(served.filter((s) => s !== `${first.hash}:1000` && s !== `${now.hash}:1001`), []);
  assert.equal(served[0], `${first.hash}:1000`);
  // Every key of the new file is served.
  assert.equal(findVirtualKey(now.governance, 'sk-bf-reload-4999')?.record.id, 'vk-4999');
});

test('reseed goes in steps: the loop runs between the compile\'s slices and the store write, and the swap comes last', async () => {
  const run = await start(config(5000, 0));
  const first = run.service.current();
  const seed = loadConfigFileFrom(config(5000, 4));
  let done = false;
  let turns = 0;
  let servedOld = 0;
  const reseeded = run.service.reseed(seed).then(() => (done = true));
  while (!done) {
    if (run.service.current() === first) servedOld++;
    turns++;
    await nextTurn();
  }
  await reseeded;
  // One turn at least per step: before the compile, after its digest, per 2,000 keys, after the
  // keys, before the store write; the old snapshot served through all of them.
  assert.ok(turns >= 5, `only ${turns} turns of the loop ran during the reseed`);
  assert.ok(servedOld >= 5, `the old snapshot was served for ${servedOld} turns only`);
  assert.deepEqual([...limitsOf(run)], [1004]);
});

test('a bad edit is refused with the field at fault, and the last good configuration keeps serving; a bad JSON file too', async () => {
  const run = await start(config(3, 0));
  const good = run.service.current();
  const bad = config(3, 1) as { governance: { virtual_keys: { budget_id: string }[] } };
  bad.governance.virtual_keys[1].budget_id = 'no-such-budget';
  writeFileSync(run.file, JSON.stringify(bad));
  await eventually(() => assert.equal(run.errors.length, 1), patience(5000));
  assert.ok(run.errors[0] instanceof ConfigError);
  assert.match(run.errors[0].message, /governance\.virtual_keys\[1\]\.budget_id: no budget with id 'no-such-budget'/);
  assert.equal(run.service.current(), good);
  writeFileSync(run.file, '{ "providers": ');
  await eventually(() => assert.equal(run.errors.length, 2), patience(5000));
  assert.match(run.errors[1].message, /not valid JSON/);
  assert.equal(run.service.current(), good);
  // A good edit afterwards is taken.
  writeFileSync(run.file, JSON.stringify(config(3, 7)));
  await eventually(() => assert.deepEqual([...limitsOf(run)], [1007]), patience(5000));
  assert.equal(run.reloads, 1);
});

test('a broken file is refused once, however many change events its save raises', async () => {
  const run = await start(config(3, 0));
  writeFileSync(run.file, '{ "providers": ');
  await eventually(() => assert.equal(run.errors.length, 1), patience(5000));
  // Another event for the same file (its mode set again: contents and mtime unchanged).
  chmodSync(run.file, 0o644);
  await new Promise((r) => setTimeout(r, patience(500)));
  assert.equal(run.errors.length, 1);
  // A new save of the same broken text is a new edit: refused again.
  await new Promise((r) => setTimeout(r, 20));
  writeFileSync(run.file, '{ "providers": ');
  await eventually(() => assert.equal(run.errors.length, 2), patience(5000));
});

test('objects written through /api stay laid over a reloaded seed', async () => {
  const run = await start(config(2, 0));
  await run.service.update((d) => {
    d.governance!.budgets!.push({ id: 'api-budget', max_limit: 5, reset_duration: '1d' });
  });
  writeFileSync(run.file, JSON.stringify(config(2, 3)));
  await eventually(() => assert.equal(run.reloads, 1), patience(5000));
  const budgets = run.service.current().governance.budgets;
  assert.equal(budgets.get('api-budget')?.max_limit, 5);
  assert.equal(budgets.get('b-0')?.max_limit, 1003);
  assert.equal(run.service.ownerOf('budgets', 'api-budget')?.owner, 'store');
});

test('the compile in steps gives the snapshot the compile at once gives', async () => {
  const { config: c } = loadConfigFileFrom(config(4500, 2));
  const once = compileSnapshot(c);
  const stepped = await compileSnapshotInSteps(c);
  assert.equal(stepped.hash, once.hash);
  assert.deepEqual([...stepped.governance.virtualKeys.keys()], [...once.governance.virtualKeys.keys()]);
  assert.deepEqual([...stepped.governance.budgets.entries()], [...once.governance.budgets.entries()]);
  assert.equal(stepped.routing.skipped.length, once.routing.skipped.length);
});

test("the file store does not read back its own write, and hears another process's", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-store-'));
  dirs.push(dir);
  const file = join(dir, 'config.store.json');
  const mine = new FileConfigStore(file);
  const other = new FileConfigStore(file);
  let notices = 0;
  mine.subscribe(() => notices++);
  await mine.save({ seed: 's', revision: 1, document: {} });
  // The watcher's debounce is 50 ms; a notice for the own write would come within it.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(notices, 0);
  await other.save({ seed: 's', revision: 2, document: {} });
  await eventually(() => assert.ok(notices >= 1), patience(5000));
  assert.equal((await mine.load())?.revision, 2);
});

function loadConfigFileFrom(doc: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-reload-'));
  dirs.push(dir);
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(doc));
  return loadConfigFile(file);
}
