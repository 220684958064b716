// An async job runs as its submitter, identified and admitted at submit: the run is handed that
// caller (never the key's secret in a header), the identify stage takes it as it is, and the limits
// stage does not admit the request a second time (its usage is still charged).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot, type Snapshot } from '../../proxy/src/config/snapshot.ts';
import { runJob, type Executor } from '../../proxy/src/async/run-job.ts';
import type { Job } from '../../proxy/src/async/job-store.ts';
import type { ExecuteRequest } from '../../proxy/src/operations/execute.ts';
import { createServices } from '../../proxy/src/services.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { RequestContext, type KnownCaller } from '../../proxy/src/pipeline/context.ts';
import type { Accept } from '../../proxy/src/pipeline/runner.ts';

const SECRET = 'sk-bf-submitted-secret';
const ROTATED = 'sk-bf-rotated-secret';

function snapshotWith(keys: { value: string; is_active?: boolean }[], client: Record<string, unknown> = {}): Snapshot {
  const config = {
    client,
    providers: { openai: { keys: [{ name: 'k', value: 'sk-upstream', weight: 1 }], network_config: { base_url: 'http://127.0.0.1:9' } } },
    governance: {
      rate_limits: [{ id: 'one', request_max_limit: 1, request_reset_duration: '1h' }],
      virtual_keys: keys.map((k) => ({ id: 'vk-team', name: 'team', rate_limit_id: 'one', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }], ...k })),
    },
  };
  return compileSnapshot(checkConfig(config, 'test').config);
}

function job(over: Partial<Job> = {}): Job {
  return {
    id: 'job-1', operation: 'chat', path: 'chat/completions', request_type: 'chat_completion', status: 'processing',
    virtual_key_id: 'vk-team', request_body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    request_headers: JSON.stringify({ 'x-bf-cache-key': 'k1' }), webhook: undefined, webhook_state: undefined, created_at: 0, ttl_seconds: 60,
    expires_at: 0, completed_at: undefined, status_code: undefined, result: undefined, error: undefined, lease_id: 'l', attempts: 1, expired: false,
    ...over,
  };
}

/** Runs the job with an executor that only records what it was asked. */
async function run(j: Job, snapshot: Snapshot) {
  const asked: ExecuteRequest[] = [];
  const execute: Executor = async (_snap, request) => {
    asked.push(request);
    return { kind: 'json', status: 200, value: { ok: true } };
  };
  const out = await runJob(j, snapshot, execute, new AbortController().signal);
  return { out, asked };
}

const carriesSecret = (request: ExecuteRequest) => JSON.stringify(request.headers ?? {}).includes('sk-bf-');

test('a job runs as the virtual key that submitted it: handed as its caller, admitted, no secret in any header', async () => {
  const { out, asked } = await run(job(), snapshotWith([{ value: SECRET }]));
  assert.equal(out.status, 'completed');
  assert.equal(asked.length, 1);
  const caller = asked[0].caller!;
  assert.equal(caller.admitted, true);
  assert.equal(caller.principal?.record.id, 'vk-team');
  assert.equal(asked[0].headers?.['x-bf-vk'], undefined);
  assert.equal(carriesSecret(asked[0]), false);
  assert.equal(asked[0].headers?.['x-bf-cache-key'], 'k1');
});

test('a secret rotated between submit and run: the job still runs, as the same key', async () => {
  const { out, asked } = await run(job(), snapshotWith([{ value: ROTATED }]));
  assert.equal(out.status, 'completed');
  assert.equal(asked[0].caller!.principal?.record.id, 'vk-team');
  assert.equal(carriesSecret(asked[0]), false);
});

test('a key deleted or deactivated between submit and run: the job fails with 401 and nothing runs', async () => {
  for (const [snapshot, message] of [
    [snapshotWith([]), /no longer exists/],
    [snapshotWith([{ value: SECRET, is_active: false }]), /inactive/],
  ] as const) {
    const { out, asked } = await run(job(), snapshot);
    assert.equal(out.status, 'failed');
    assert.equal(out.status_code, 401);
    assert.match(JSON.parse(out.error!).error.message, message);
    assert.equal(asked.length, 0);
  }
});

test('an anonymous job runs anonymous, unless the gateway requires a key by then', async () => {
  const open = await run(job({ virtual_key_id: undefined }), snapshotWith([{ value: SECRET }]));
  assert.equal(open.out.status, 'completed');
  assert.deepEqual(open.asked[0].caller, { principal: undefined, admitted: true });
  const closed = await run(job({ virtual_key_id: undefined }), snapshotWith([{ value: SECRET }], { enforce_auth_on_inference: true }));
  assert.equal(closed.out.status_code, 401);
  assert.equal(closed.asked.length, 0);
});

test('the stages: a known caller is taken as identified and, admitted, not counted against its limits again', async () => {
  const snapshot = snapshotWith([{ value: SECRET }]);
  const services = createServices({ metrics: new Metrics({ processMetrics: false }) });
  const accept: Accept = async (ctx) => {
    ctx.scope = { kind: 'model', model: 'openai/gpt-4o', fallbacks: undefined, body: {} };
    ctx.requestType = 'chat_completion';
    return async (c) => ({ kind: 'json', status: 200, value: { vk: c.vk?.record.id ?? null } });
  };
  const principal = [...snapshot.governance.virtualKeys.values()][0];
  const admitted: KnownCaller = { principal, admitted: true };
  // The key allows one request per hour: a run as an admitted caller does not use it up.
  for (let i = 0; i < 3; i++) {
    const out = await services.pipeline.run(new RequestContext({ services, snapshot, operation: 'chat', caller: admitted }), accept, true);
    assert.deepEqual(out, { kind: 'json', status: 200, value: { vk: 'vk-team' } });
  }
  const byHeader = () => services.pipeline.run(new RequestContext({ services, snapshot, operation: 'chat', headers: { 'x-bf-vk': SECRET } }), accept, true);
  assert.equal((await byHeader()).kind, 'json');
  const refused = await byHeader();
  assert.equal(refused.kind === 'error' && refused.error.status, 429);
  // A caller not yet admitted is counted as any other request.
  const notAdmitted = await services.pipeline.run(new RequestContext({ services, snapshot, operation: 'chat', caller: { principal, admitted: false } }), accept, true);
  assert.equal(notAdmitted.kind === 'error' && notAdmitted.error.status, 429);
  await services.close();
});
