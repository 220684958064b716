// The logging stage in a gateway run in process (execute(), no HTTP): the record each request gives
// the writer, for a chat, a stream from another provider (its text collected by the tap), a refusal
// and a fallback; and what building one record costs, since it runs after every request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { mockProviders } from '../helpers/providers.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot, type Snapshot } from '../../proxy/src/config/snapshot.ts';
import { createServices, type Services } from '../../proxy/src/services.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { execute } from '../../proxy/src/operations/execute.ts';
import { RequestContext } from '../../proxy/src/pipeline/context.ts';
import { buildRecord } from '../../proxy/src/logs/stage.ts';
import type { LogRecord } from '../../proxy/src/logs/record.ts';
import type { ChatChunk } from '../../proxy/src/unified/chat.ts';

const VK = 'sk-bf-inproc-log-0123456789';
let mock: MockProvider;
let services: Services;
let snapshot: Snapshot;
const records: LogRecord[] = [];

before(async () => {
  mock = await startMockProvider();
  const config = {
    providers: mockProviders(mock.url),
    client: { enforce_auth_on_inference: true, enable_logging: true },
    governance: {
      virtual_keys: [{ id: 'inproc', name: 'inproc', value: VK, team_id: 'team-a', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }, { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 }] }],
      teams: [{ id: 'team-a', name: 'team-a', customer_id: 'cust-a' }],
      customers: [{ id: 'cust-a', name: 'cust-a' }],
    },
  };
  snapshot = compileSnapshot(checkConfig(config, 'in-process logging test', {}).config);
  services = createServices({ metrics: new Metrics({ processMetrics: false }), logs: { enqueue: (r) => records.push(r) > 0 } });
});
after(async () => {
  await services.close();
  await mock.close();
});

const headers = { 'x-bf-vk': VK };
const chat = (model: string, stream = false, fallbacks?: string[]) => ({ model, messages: [{ role: 'user', content: 'log me please' }], ...(stream && { stream: true }), ...(fallbacks && { fallbacks }) });

test('a chat gives one record: provider, model, VK, team, customer, key, tokens, content', async () => {
  records.length = 0;
  const out = await execute(services, snapshot, { operation: 'chat', body: chat('openai/gpt-4o'), headers });
  assert.equal(out.kind, 'json');
  assert.equal(records.length, 1);
  const r = records[0];
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.status, 'success');
  assert.equal(r.provider, 'openai');
  assert.equal(r.model, 'gpt-4o');
  assert.equal(r.requested_model, 'openai/gpt-4o');
  assert.deepEqual([r.virtual_key_id, r.team_id, r.customer_id], ['inproc', 'team-a', 'cust-a']);
  assert.equal(r.selected_key_name, 'openai-key');
  assert.ok(r.prompt_tokens! > 0 && r.completion_tokens! > 0);
  assert.equal(typeof r.cost, 'number', 'gpt-4o has a list price');
  assert.equal(r.stream, false);
  assert.match(r.input_content!, /log me please/);
  assert.match(r.output_content!, /Mock reply to: log me please/);
  assert.ok(!JSON.stringify(r).includes(VK) && !JSON.stringify(r).includes('sk-openai-test'));
});

test('a stream from another provider: the tap collects the text it sent; TTFT and usage are set', async () => {
  records.length = 0;
  const out = await execute(services, snapshot, { operation: 'chat', body: chat('anthropic/claude-sonnet-4-5', true), headers });
  assert.equal(out.kind, 'stream');
  let text = '';
  if (out.kind === 'stream') for await (const batch of out.items) for (const c of batch as ChatChunk[]) text += c.choices[0]?.delta?.content ?? '';
  assert.equal(records.length, 1);
  const r = records[0];
  assert.equal(r.stream, true);
  assert.equal(r.provider, 'anthropic');
  assert.equal(r.output_content, text);
  assert.ok(r.ttft! >= 0 && r.ttft! <= r.latency!);
  assert.ok(r.completion_tokens! > 0);
});

test('a refusal and a fallback are recorded as such', async () => {
  records.length = 0;
  await execute(services, snapshot, { operation: 'chat', body: chat('openai/gpt-4o'), headers: {} });
  assert.equal(records[0].status, 'error');
  assert.equal((records[0].error_details as { status: number }).status, 401);
  assert.equal(records[0].virtual_key_id, undefined);

  mock.inject({ format: 'openai', status: 503 });
  await execute(services, snapshot, { operation: 'chat', body: chat('openai/gpt-4o', false, ['anthropic/claude-sonnet-4-5']), headers });
  mock.reset();
  const r = records[1];
  assert.equal(r.status, 'success');
  assert.equal(r.provider, 'anthropic');
  assert.equal(r.fallback_index, 1);
});

test('building a record is cheap (it runs after every request)', () => {
  const ctx = new RequestContext({ services, snapshot, operation: 'chat' });
  ctx.provider = 'openai';
  ctx.model = 'gpt-4o';
  ctx.usage = { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 };
  ctx.vk = snapshot.governance.virtualKeys.values().next().value;
  const result = { kind: 'json' as const, status: 200, value: {} };
  const n = 20_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) buildRecord(ctx, result, undefined);
  const us = ((performance.now() - t0) * 1000) / n;
  console.log(`buildRecord: ${us.toFixed(2)} µs per record (content off)`);
  assert.ok(us < 50, `${us} µs`);
});
