// Where a failure on the request's path ends up. The path is promise chains, not async functions,
// so a synchronous throw at any step must still be what a rejection there would be: the pipeline's
// error outcome (with the after hooks told), a target's GatewayError, an upstream call's rejection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { RequestContext, type ContextServices } from '../../proxy/src/pipeline/context.ts';
import { Pipeline, type Accept, type Execute } from '../../proxy/src/pipeline/runner.ts';
import type { Outcome } from '../../proxy/src/pipeline/outcome.ts';
import type { Stage } from '../../proxy/src/pipeline/stage.ts';
import { invoke, type AttemptMetrics } from '../../proxy/src/pipeline/invoke.ts';
import { sendUpstream } from '../../proxy/src/pipeline/upstream-call.ts';
import { ADAPTERS } from '../../proxy/src/providers/registry.ts';
import type { ProviderRuntime } from '../../proxy/src/providers/runtime.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { freePort } from '../helpers/ports.ts';

const snapshot = compileSnapshot(
  checkConfig({ providers: { openai: { keys: [{ name: 'k', value: 'sk-upstream', weight: 1 }], network_config: { base_url: 'http://127.0.0.1:9' } } } }, 'test').config,
);
const openai = snapshot.providers.get('openai')!;
const context = () => new RequestContext({ services: {} as ContextServices, snapshot, operation: 'chat' });
const ok: Outcome = { kind: 'json', status: 200, value: { ok: true } };
const refused = () => new GatewayError(403, 'not for you');

type Step = 'sync' | 'async';
/** A step failing with `err` as its kind says: thrown where it is called, or a rejected promise. */
function failing<T>(how: Step, err: () => Error): () => Promise<T> {
  return how === 'sync'
    ? () => {
        throw err();
      }
    : () => Promise.reject(err());
}

/** The pipeline with one caller and one request stage, each answering through `before` when given one. */
function pipelineWith(caller: Stage['before'], request: Stage['before'], seen: Outcome[]): Pipeline {
  return new Pipeline(() => ({
    caller: [{ name: 'caller', before: caller }, { name: 'seen', after: (_ctx, result) => void seen.push(result) }],
    request: [{ name: 'request', before: request }],
  }));
}

test('a failure at any step of the pipeline, thrown or rejected, is the error outcome, and the after hooks see it', async () => {
  const execute: Execute = () => Promise.resolve(ok);
  const accept: Accept = () => Promise.resolve(execute);
  for (const how of ['sync', 'async'] as const) {
    for (const readFirst of [true, false]) {
      const cases: [string, Pipeline, Accept, number][] = [];
      const seen: Outcome[] = [];
      const none = () => undefined;
      cases.push(['the accept step', pipelineWith(none, none, seen), failing(how, refused), 403]);
      cases.push(['a caller stage', pipelineWith(failing(how, refused), none, seen), accept, 403]);
      cases.push(['a request stage', pipelineWith(none, failing(how, () => new TypeError('a bug')), seen), accept, 500]);
      cases.push(['the execution', pipelineWith(none, none, seen), () => Promise.resolve(failing<Outcome>(how, refused)), 403]);
      for (const [where, pipeline, acc, status] of cases) {
        const name = `${where} (${how}, readFirst ${readFirst})`;
        seen.length = 0;
        const out = await pipeline.run(context(), acc, readFirst);
        assert.equal(out.kind, 'error', name);
        assert.equal(out.kind === 'error' && out.error.status, status, name);
        assert.deepEqual(seen, [out], name);
      }
    }
  }
  // An early answer from a stage, and the execution's, settle as the run's promise all the same.
  const seen: Outcome[] = [];
  const early: Outcome = { kind: 'json', status: 202, value: {} };
  assert.equal(await pipelineWith(() => early, () => undefined, seen).run(context(), () => Promise.resolve(() => Promise.resolve(ok))), early);
  assert.equal(await pipelineWith(() => undefined, () => undefined, seen).run(context(), () => Promise.resolve(() => Promise.resolve(ok)), true), ok);
  assert.deepEqual(seen, [early, ok]);
});

const metrics: AttemptMetrics = {
  fallbacksTotal: { labels: () => ({ inc() {} }) },
  retriesTotal: { labels: () => ({ inc() {} }) },
  upstreamTime: () => ({ observe() {} }),
  modelLabel: (m) => m,
  admitModel() {},
};

test("a target's failure before anything is sent is a rejection naming the provider, never a throw", async () => {
  const signal = new AbortController().signal;
  // A bug in the request's translation: a 500 naming the provider.
  const bug = invoke([{ provider: openai, model: 'gpt-4o' }], () => {
    throw new TypeError('cannot read the messages');
  }, signal, metrics);
  await assert.rejects(bug, (e: GatewayError) => e instanceof GatewayError && e.status === 500 && e.provider === 'openai' && /cannot read the messages/.test(e.message));
  // A provider without keys fails when its key is picked, after the build.
  const keyless: ProviderRuntime = { ...openai, keys: [], keyless: false };
  const noKeys = invoke([{ provider: keyless, model: 'gpt-4o' }], (t, a) => a.chatRequest({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, t.model, false), signal, metrics);
  await assert.rejects(noKeys, (e: GatewayError) => e.status === 500 && e.code === 'no_keys');
});

test('an upstream call that cannot be sent rejects: no model server to pick, no connection', async () => {
  const adapter = ADAPTERS[openai.kind.format];
  const up = adapter.chatRequest({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, 'gpt-4o', false);
  const signal = new AbortController().signal;
  const pool: ProviderRuntime = { ...openai, endpoints: { pick: () => ({ error: 'no server is ready' }) } as unknown as ProviderRuntime['endpoints'] };
  const unpicked = sendUpstream(pool, adapter, openai.keys[0], up, JSON.stringify(up.body), signal);
  await assert.rejects(unpicked, (e: GatewayError) => e.status === 503 && e.code === 'no_endpoints');
  const closed = compileSnapshot(
    checkConfig({ providers: { openai: { keys: [{ name: 'k', value: 'sk-upstream', weight: 1 }], network_config: { base_url: `http://127.0.0.1:${await freePort()}` } } } }, 'test').config,
  ).providers.get('openai')!;
  const unreachable = sendUpstream(closed, adapter, closed.keys[0], up, JSON.stringify(up.body), signal);
  await assert.rejects(unreachable, (e: GatewayError) => e.status === 502 && e.type === 'upstream_connection_error');
});
