// A gateway run in process, with no HTTP server in front: execute() takes a request and hands back
// its outcome (a JSON value, or a stream of unified chunks read as they come), through the same
// stages as HTTP (the virtual key checked, rate limits counted, metrics recorded). The mock provider
// plays the upstream.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { mockProviders } from '../helpers/providers.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot, type Snapshot } from '../../proxy/src/config/snapshot.ts';
import { createServices, type Services } from '../../proxy/src/services.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { execute } from '../../proxy/src/operations/execute.ts';
import type { Outcome } from '../../proxy/src/pipeline/outcome.ts';
import type { ChatChunk, ChatResponse } from '../../proxy/src/unified/chat.ts';

const VK = 'sk-bf-inproc-0123456789';
let mock: MockProvider;
let services: Services;
let snapshot: Snapshot;

before(async () => {
  mock = await startMockProvider();
  const config = {
    providers: mockProviders(mock.url),
    client: { enforce_auth_on_inference: true },
    governance: {
      rate_limits: [{ id: 'four', request_max_limit: 4, request_reset_duration: '1h' }],
      virtual_keys: [{ id: 'inproc', name: 'inproc', value: VK, rate_limit_id: 'four', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }, { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 }] }],
    },
  };
  snapshot = compileSnapshot(checkConfig(config, 'in-process test', {}).config);
  services = createServices({ metrics: new Metrics({ processMetrics: false }) });
});
after(async () => {
  await services.close();
  await mock.close();
});

const headers = { 'x-bf-vk': VK };
const chat = (model: string, stream = false) => ({ model, messages: [{ role: 'user', content: 'hello there' }], ...(stream && { stream: true }) });

function kind<K extends Outcome['kind']>(o: Outcome, k: K): Extract<Outcome, { kind: K }> {
  assert.equal(o.kind, k, o.kind === 'error' ? `${o.error.status} ${o.error.message}` : o.kind);
  return o as Extract<Outcome, { kind: K }>;
}

async function requestsCounted(operation: string, status: string): Promise<number> {
  const metric = await services.metrics.requestsTotal.get();
  return metric.values.filter((v) => v.labels.operation === operation && v.labels.status === status).reduce((n, v) => n + v.value, 0);
}

test('a chat runs through execute() and answers a value with extra_fields, no HTTP involved', async () => {
  const before = mock.requests.length;
  const out = kind(await execute(services, snapshot, { operation: 'chat', body: chat('openai/gpt-4o'), headers }), 'json');
  assert.equal(out.status, 200);
  const answer = out.value as ChatResponse & { extra_fields: { provider: string; model_requested: string } };
  assert.equal(typeof answer.choices[0].message.content, 'string');
  assert.ok(answer.choices[0].message.content!.length > 0);
  assert.equal(answer.extra_fields.provider, 'openai');
  assert.equal(answer.extra_fields.model_requested, 'openai/gpt-4o');
  assert.ok(answer.usage!.total_tokens > 0);
  assert.equal(mock.requests.length, before + 1, 'one upstream call');
  assert.ok((await requestsCounted('chat', '200')) >= 1, 'the metrics stage recorded it');
});

test('a streamed chat runs through execute() and its unified chunks are read as they come', async () => {
  const out = kind(await execute(services, snapshot, { operation: 'chat', body: chat('anthropic/claude-sonnet-4-5', true), headers }), 'stream');
  const chunks: ChatChunk[] = [];
  for await (const batch of out.items) chunks.push(...(batch as ChatChunk[]));
  assert.ok(chunks.length > 1, `several chunks (${chunks.length})`);
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.ok(text.length > 0, 'the deltas carry the answer');
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
  assert.equal(chunks.at(-1)!.choices.at(-1)?.finish_reason ?? chunks.findLast((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason, 'stop');
  assert.equal((chunks[0] as ChatChunk & { extra_fields: { provider: string } }).extra_fields.provider, 'anthropic');
  // The encoding HTTP would use is there for whoever wants bytes.
  assert.match(out.format.encode(chunks[0]), /^data: \{/);
  // After the stream ended, its after hooks ran: the request is in the metrics, tokens counted.
  const tokens = await services.metrics.tokensTotal.get();
  assert.ok(tokens.values.some((v) => v.labels.provider === 'anthropic' && v.value > 0), 'stream usage recorded');
});

test('the same stages refuse in process: 401 without a virtual key, 403 outside its grants, 429 past its limit', async () => {
  const anonymous = kind(await execute(services, snapshot, { operation: 'chat', body: chat('openai/gpt-4o') }), 'error');
  assert.equal(anonymous.error.status, 401);
  const denied = kind(await execute(services, snapshot, { operation: 'chat', body: chat('gemini/gemini-2.5-flash'), headers }), 'error');
  assert.equal(denied.error.status, 403);
  const invalid = kind(await execute(services, snapshot, { operation: 'chat', body: { model: 'openai/gpt-4o' }, headers }), 'error');
  assert.equal(invalid.error.status, 400);
  assert.equal(invalid.error.param, 'messages');
  // Two calls were admitted above; two more fit in the limit of four, the fifth does not.
  for (let i = 0; i < 2; i++) kind(await execute(services, snapshot, { operation: 'chat', body: chat('openai/gpt-4o'), headers }), 'json');
  const limited = kind(await execute(services, snapshot, { operation: 'chat', body: chat('openai/gpt-4o'), headers }), 'error');
  assert.equal(limited.error.status, 429);
  assert.equal(await requestsCounted('chat', '429'), 1);
  assert.equal(await requestsCounted('chat', '401'), 1);
});

test('a step run for another request (an agent loop) is logged with that request as its parent', async () => {
  const records: { id: string; parent_request_id?: string; status: string }[] = [];
  const logged = createServices({ metrics: new Metrics({ processMetrics: false }), logs: { enqueue: (r) => records.push(r) > 0 } });
  const logging = compileSnapshot(checkConfig({ providers: mockProviders(mock.url), client: { enable_logging: true } }, 'in-process logging', {}).config);
  try {
    kind(await execute(logged, logging, { operation: 'chat', body: chat('openai/gpt-4o') }), 'json');
    const parent = records[0];
    assert.ok(parent && parent.parent_request_id === undefined);
    kind(await execute(logged, logging, { operation: 'chat', body: chat('openai/gpt-4o'), parentRequestId: parent.id }), 'json');
    assert.equal(records.length, 2);
    assert.equal(records[1].parent_request_id, parent.id);
    assert.notEqual(records[1].id, parent.id);
  } finally {
    await logged.close();
  }
});
