// The stage runner: befores in order (one may answer instead), afters in reverse order for every
// stage and always (a refusal, a failed call, a stream that ended or failed), taps on each streamed
// item, and plugins placed by config (enabled, placement, order) around the builtins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot, type Snapshot } from '../../proxy/src/config/snapshot.ts';
import { Pipeline, type Accept } from '../../proxy/src/pipeline/runner.ts';
import { RequestContext } from '../../proxy/src/pipeline/context.ts';
import type { Outcome } from '../../proxy/src/pipeline/outcome.ts';
import type { Stage, StageFactory } from '../../proxy/src/pipeline/stage.ts';
import { MemoryCounterStore } from '../../proxy/src/governance/counters/memory.ts';
import { ModelCatalog } from '../../proxy/src/governance/catalog.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const services = { counters: new MemoryCounterStore(), catalog: new ModelCatalog(), metrics: new Metrics({ processMetrics: false }) };
const snap = (plugins: unknown[] = []): Snapshot => compileSnapshot(checkConfig({ plugins }, 't', {}).config);

/** A stage that writes what happened to it into `log`. */
function recorder(name: string, log: string[], opts: { answer?: Outcome; refuse?: boolean } = {}): Stage {
  return {
    name,
    before: () => {
      log.push(`before ${name}`);
      if (opts.refuse) throw new GatewayError(429, `${name} says no`);
      return opts.answer;
    },
    after: (ctx, result) => log.push(`after ${name} ${result.kind} ${ctx.status}`),
    tap: (_ctx, item) => log.push(`tap ${name} ${String(item)}`),
  };
}

const ok: Accept = async (ctx) => {
  ctx.scope = { kind: 'none' };
  return async () => ({ kind: 'json', status: 200, value: { ok: true } });
};

test('befores run in order, afters in reverse, and the execution in between', async () => {
  const log: string[] = [];
  const p = new Pipeline(() => ({ caller: [recorder('a', log)], request: [recorder('b', log)] }));
  const out = await p.run(new RequestContext({ services, snapshot: snap(), operation: 'chat' }), ok);
  assert.deepEqual(out, { kind: 'json', status: 200, value: { ok: true } });
  assert.deepEqual(log, ['before a', 'before b', 'after b json 200', 'after a json 200']);
});

test('a before may answer instead of the call (a cache hit); every after still runs', async () => {
  const log: string[] = [];
  const hit: Outcome = { kind: 'json', status: 200, value: 'cached' };
  let executed = false;
  const p = new Pipeline(() => ({ caller: [recorder('a', log, { answer: hit })], request: [recorder('b', log)] }));
  const out = await p.run(new RequestContext({ services, snapshot: snap(), operation: 'chat' }), async () => async () => {
    executed = true;
    return { kind: 'json', status: 200, value: 'fresh' };
  });
  assert.equal(out, hit);
  assert.equal(executed, false);
  assert.deepEqual(log, ['before a', 'after b json 200', 'after a json 200']);
});

test('a refusal or a failed call becomes an error outcome; afters see it', async () => {
  const log: string[] = [];
  const p = new Pipeline(() => ({ caller: [recorder('a', log)], request: [recorder('b', log, { refuse: true })] }));
  const out = await p.run(new RequestContext({ services, snapshot: snap(), operation: 'chat' }), ok);
  assert.equal(out.kind, 'error');
  assert.equal((out as { error: GatewayError }).error.status, 429);
  assert.deepEqual(log, ['before a', 'before b', 'after b error 429', 'after a error 429']);

  const log2: string[] = [];
  const p2 = new Pipeline(() => ({ caller: [recorder('a', log2)], request: [] }));
  const failed = await p2.run(new RequestContext({ services, snapshot: snap(), operation: 'chat' }), async () => async () => {
    throw new GatewayError(502, 'upstream down', { provider: 'openai' });
  });
  assert.equal(failed.kind, 'error');
  assert.deepEqual(log2, ['before a', 'after a error 502']);
});

test('a stream runs its afters once consumed, with its failure status when it fails; taps see each item', async () => {
  const log: string[] = [];
  const p = new Pipeline(() => ({ caller: [recorder('a', log)], request: [] }));
  const streamed = (fail: boolean): Accept => async () => async (ctx) => ({
    kind: 'stream',
    format: { encode: String, done: '', errorEvent: (e) => e.message },
    items: (async function* () {
      for (const item of ['x', 'y']) {
        for (const t of ctx.taps) t.tap!(ctx, item);
        yield [item];
      }
      if (fail) throw new GatewayError(502, 'cut');
    })(),
  });
  const out = await p.run(new RequestContext({ services, snapshot: snap(), operation: 'chat' }), streamed(false));
  assert.deepEqual(log, ['before a'], 'afters wait for the stream');
  const seen: unknown[] = [];
  for await (const batch of (out as { items: AsyncIterable<unknown[]> }).items) seen.push(...batch);
  assert.deepEqual(seen, ['x', 'y']);
  assert.deepEqual(log, ['before a', 'tap a x', 'tap a y', 'after a stream 200']);

  log.length = 0;
  const bad = await p.run(new RequestContext({ services, snapshot: snap(), operation: 'chat' }), streamed(true));
  await assert.rejects(async () => {
    for await (const _ of (bad as { items: AsyncIterable<unknown[]> }).items);
  }, /cut/);
  assert.equal(log.at(-1), 'after a error 502');
});

test('plugins: only enabled ones, pre_builtin before the builtin request stages and post_builtin after, by order', async () => {
  const log: string[] = [];
  const factory = (name: string): StageFactory => () => recorder(name, log);
  const registry = new Map([['p1', factory('p1')], ['p2', factory('p2')], ['p3', factory('p3')], ['off', factory('off')]]);
  const p = new Pipeline(() => ({ caller: [recorder('id', log)], request: [recorder('gov', log)] }), registry);
  const s = snap([
    { name: 'p3', enabled: true, order: 2 },
    { name: 'p1', enabled: true, placement: 'pre_builtin' },
    { name: 'off', enabled: false, placement: 'pre_builtin' },
    { name: 'p2', enabled: true, order: 1 },
    { name: 'not-a-plugin', enabled: true },
  ]);
  await p.run(new RequestContext({ services, snapshot: s, operation: 'chat' }), ok);
  assert.deepEqual(log.filter((l) => l.startsWith('before')), ['before id', 'before p1', 'before gov', 'before p2', 'before p3']);
  assert.deepEqual(log.filter((l) => l.startsWith('after')).map((l) => l.split(' ')[1]), ['p3', 'p2', 'gov', 'p1', 'id']);
  // Built once per snapshot.
  assert.equal(p.stages(s), p.stages(s));
});
