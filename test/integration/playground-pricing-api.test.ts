// The dashboard's playground and pricing routes on a real gateway (child process, default SQLite
// logs) in front of the mock provider: POST /api/playground runs a request as a virtual key chosen
// by id (streamed: the /v1 events, then a summary with the log record's tokens, cost, TTFT and
// routing), refuses a model the key does not allow, names every bad field, needs governance:write
// and is audited; GET /api/governance/pricing gives the price in force and its source; an override
// written through /api/governance/pricing-overrides prices the next request (asserted in its log
// record), works for a provider of config.json, and survives a config.json edit and a restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, basic, bearer, type Api, type ApiError } from '../helpers/api.ts';
import { eventually } from '../helpers/patience.ts';
import type { AuditLogList, IssuedManagementKey, UsageAnswer, LogEntry, PlaygroundAnswer, PlaygroundModels, PlaygroundSummary, PriceInForce, PricesInForce } from '../../proxy/src/api/answers.ts';

const PASSWORD = 'playground-admin-password';
const VK = { id: 'vk-play', name: 'play', value: 'sk-bf-playground-secret-0123456789' };

let mock: MockProvider;
let g: RunningGateway;
let admin: Api;

const config = (extra: Record<string, unknown> = {}) => ({
  providers: mockProviders(mock.url),
  client: { enforce_auth_on_inference: true, ...extra },
  governance: {
    auth_config: { is_enabled: true, admin_username: 'admin', admin_password: PASSWORD },
    budgets: [{ id: 'b-play', max_limit: 100, reset_duration: '1d' }],
    virtual_keys: [{ ...VK, budget_id: 'b-play', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o', 'house-model-1'], key_ids: ['*'], weight: 1 }] }],
  },
});

before(async () => {
  mock = await startMockProvider();
  g = await startGateway(config());
  admin = apiClient(g, basic('admin', PASSWORD));
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

interface Event {
  event: string;
  data: string;
}

function events(text: string): Event[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      return { event, data: data.join('\n') };
    });
}

function assertError(a: { status: number; body: unknown; text: string }, status: number, param?: string): ApiError {
  assert.equal(a.status, status, a.text);
  const err = a.body as ApiError;
  if (param !== undefined) assert.equal(err.error.param, param, err.error.message);
  return err;
}

const chat = (model: string, stream: boolean, content = 'Say hello') => ({ model, messages: [{ role: 'user', content }], stream, ...(stream && { stream_options: { include_usage: true } }) });

async function logOf(id: string): Promise<LogEntry> {
  let entry: LogEntry | undefined;
  await eventually(async () => {
    const r = await admin<LogEntry>('GET', `/api/logs/${id}`);
    assert.equal(r.status, 200, r.text);
    entry = r.body;
  }, 5000);
  return entry!;
}

const rowOf = (p: PricesInForce, provider: string, model: string): PriceInForce => {
  const row = p.models.find((r) => r.provider === provider && r.model === model);
  assert.ok(row, `${provider}/${model} is listed`);
  return row;
};

test('a streamed playground request runs as the chosen key and ends with its log record: tokens, cost, TTFT, routing', async () => {
  const res = await fetch(`${g.url}/api/playground`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...basic('admin', PASSWORD) },
    body: JSON.stringify({ virtual_key_id: VK.id, operation: 'chat', request: chat('openai/gpt-4o', true, 'playground stream marker') }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const all = events(await res.text());
  const text = all
    .filter((e) => e.event === 'message' && e.data !== '[DONE]')
    .map((e) => (JSON.parse(e.data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
    .join('');
  assert.ok(text.length > 0, 'the answer streamed as chat chunks');
  assert.ok(all.some((e) => e.data === '[DONE]'));
  const last = all.at(-1)!;
  assert.equal(last.event, 'playground.summary');
  const summary = JSON.parse(last.data) as PlaygroundSummary;
  const r = summary.record;
  assert.equal(r.virtual_key_id, VK.id);
  assert.equal(r.provider, 'openai');
  assert.equal(r.model, 'gpt-4o');
  assert.equal(r.status, 'success');
  assert.ok((r.prompt_tokens ?? 0) > 0 && (r.completion_tokens ?? 0) > 0, JSON.stringify(r));
  // gpt-4o's built-in price: $2.50 in, $10 out per million tokens.
  assert.ok(Math.abs(r.cost! - (r.prompt_tokens! * 2.5e-6 + r.completion_tokens! * 10e-6)) < 1e-12, `cost ${r.cost}`);
  assert.ok(r.ttft !== undefined && r.ttft <= r.latency!, 'time to first token within the latency');
  assert.deepEqual(summary.targets, ['openai/gpt-4o']);
  assert.equal(summary.logged, true);
  assert.deepEqual(r.routing_engines_used, ['governance']);
  // The record the store keeps is the one summarised.
  const stored = await logOf(r.id);
  assert.equal(stored.cost, r.cost);
  assert.equal(stored.token_usage.total_tokens, r.total_tokens);
  assert.equal(stored.virtual_key_id, VK.id);
  assert.equal(stored.stream, true);
  // Charged to the key's budget like any /v1 request.
  await eventually(async () => {
    const usage = await admin<UsageAnswer>('GET', '/api/governance/usage');
    const budget = usage.body.budgets.find((b) => b.id === 'b-play');
    assert.ok(budget && Math.abs(budget.current_usage - r.cost!) < 1e-9, JSON.stringify(budget));
  }, 5000);
  // The key's value is in none of it.
  assert.ok(!JSON.stringify(all).includes(VK.value));
});

test('a responses request without stream answers the /v1 body and its summary', async () => {
  const a = await admin<PlaygroundAnswer>('POST', '/api/playground', { virtual_key_id: VK.id, operation: 'responses', request: { model: 'openai/gpt-4o', input: 'hello' } });
  assert.equal(a.status, 200, a.text);
  assert.equal((a.body.response as { object: string }).object, 'response');
  assert.equal(a.body.summary.record.object, 'response');
  assert.ok((a.body.summary.record.total_tokens ?? 0) > 0);
  assert.equal(a.body.summary.record.ttft, undefined, 'not streamed: no time to first token');
  assert.ok(a.headers.get('x-request-id'));
});

test('a model the key does not allow is refused with the pipeline error, and the refusal is logged', async () => {
  const a = await admin('POST', '/api/playground', { virtual_key_id: VK.id, request: chat('anthropic/claude-sonnet-4-5', true) });
  const err = assertError(a, 403);
  assert.equal(err.error.code, 'provider_not_allowed');
  assert.match(err.error.message, /virtual key 'play'/);
  const b = await admin('POST', '/api/playground', { virtual_key_id: VK.id, request: chat('openai/gpt-4.1', false) });
  assert.equal(assertError(b, 403).error.code, 'model_not_allowed');
});

test('bad playground input is a 400 naming the field', async () => {
  const cases: [unknown, string][] = [
    [{ request: chat('openai/gpt-4o', false) }, 'virtual_key_id'],
    [{ virtual_key_id: 'nope', request: chat('openai/gpt-4o', false) }, 'virtual_key_id'],
    [{ virtual_key_id: 7, request: chat('openai/gpt-4o', false) }, 'virtual_key_id'],
    [{ virtual_key_id: VK.id, operation: 'embeddings', request: chat('openai/gpt-4o', false) }, 'operation'],
    [{ virtual_key_id: VK.id }, 'request'],
    [{ virtual_key_id: VK.id, request: 'hello' }, 'request'],
    [{ virtual_key_id: VK.id, request: { messages: [] } }, 'request.model'],
    [{ virtual_key_id: VK.id, request: chat('openai/gpt-4o', false), temperature: 2 }, 'temperature'],
  ];
  for (const [body, param] of cases) assertError(await admin('POST', '/api/playground', body), 400, param);
  // The request itself is checked by its operation, as /v1 would.
  const inner = await admin('POST', '/api/playground', { virtual_key_id: VK.id, request: { model: 'openai/gpt-4o', messages: 'hi' } });
  assertError(inner, 400, 'messages');
  assertError(await admin('GET', '/api/playground/models?virtual_key_id=nope'), 400, 'virtual_key_id');
});

test('the key\'s models are listed; running needs governance:write, reading governance:read; a run is audited', async () => {
  const models = await admin<PlaygroundModels>('GET', `/api/playground/models?virtual_key_id=${VK.id}`);
  assert.equal(models.status, 200, models.text);
  assert.deepEqual(models.body, { models: ['openai/gpt-4o', 'openai/house-model-1'], any: false });

  const issued = await admin<IssuedManagementKey>('POST', '/api/management-keys', { name: 'reader', scopes: ['governance:read'] });
  assert.equal(issued.status, 201, issued.text);
  const reader = apiClient(g, bearer(issued.body.value));
  assert.equal((await reader('GET', `/api/playground/models?virtual_key_id=${VK.id}`)).status, 200);
  assert.equal((await reader('GET', '/api/governance/pricing')).status, 200);
  const run = assertError(await reader('POST', '/api/playground', { virtual_key_id: VK.id, request: chat('openai/gpt-4o', false) }), 403, 'governance:write');
  assert.equal(run.error.code, 'missing_scope');
  assertError(await reader('POST', '/api/governance/pricing-overrides', { provider: 'openai', model_pattern: 'gpt-4o', match_type: 'exact' }), 403, 'governance:write');

  await eventually(async () => {
    const audit = await admin<AuditLogList>('GET', '/api/audit-logs?limit=200');
    const runs = audit.body.records.filter((x) => x.path === '/api/playground' && x.method === 'POST');
    assert.ok(runs.some((x) => x.outcome === 'success' && x.actor.name === 'admin'), JSON.stringify(runs.map((x) => [x.outcome, x.actor.name])));
    assert.ok(runs.some((x) => x.status_code === 403 && x.outcome !== 'success'), 'the refused run is recorded too');
  }, 5000);
});

test('prices in force: built-in, none (charged 0) and not-configured providers, each with its source', async () => {
  const p = await admin<PricesInForce>('GET', '/api/governance/pricing');
  assert.equal(p.status, 200, p.text);
  const gpt = rowOf(p.body, 'openai', 'gpt-4o');
  assert.equal(gpt.source, 'builtin');
  assert.equal(gpt.configured, true);
  assert.deepEqual([gpt.input_per_million, gpt.output_per_million, gpt.cache_read_per_million], [2.5, 10, 1.25]);
  assert.ok(gpt.known_from.includes('builtin') && gpt.known_from.includes('listed') && gpt.known_from.includes('configured'), gpt.known_from.join());
  const house = rowOf(p.body, 'openai', 'house-model-1');
  assert.equal(house.source, 'none');
  assert.equal(house.input_per_million, undefined);
  assert.ok(p.body.unpriced >= 1);
  const grok = rowOf(p.body, 'xai', 'grok-4');
  assert.equal(grok.configured, false);
  assert.equal(grok.source, 'builtin');
  const sora = rowOf(p.body, 'openai', 'sora-2');
  assert.deepEqual(sora.per_second, { '720p': 0.1, '1080p': 0.1, '4k': 0.1 });
  assert.equal(rowOf(p.body, 'mistral', 'mistral-ocr-2512').per_page, 0.002);
  assert.ok(p.body.models.length >= 100, `${p.body.models.length} models`);
});

test('an override written through the API prices the next request, for a provider of config.json, and survives a config.json edit and a restart', async () => {
  // openai comes from config.json: its own pricing_overrides cannot be written here.
  assertError(await admin('PUT', '/api/providers/openai', { pricing_overrides: [] }), 409);
  const bad: [Record<string, unknown>, string][] = [
    [{ provider: 'cohere', model_pattern: 'x', match_type: 'exact' }, 'provider'],
    [{ provider: 'openai', model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: -1 }, 'input_cost_per_token'],
    [{ provider: 'openai', model_pattern: '(gpt', match_type: 'regex' }, 'model_pattern'],
    [{ provider: 'openai', model_pattern: 'gpt-4o', match_type: 'fuzzy' }, 'match_type'],
    [{ provider: 'openai', model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_image: 1 }, 'input_cost_per_image'],
  ];
  for (const [body, param] of bad) assertError(await admin('POST', '/api/governance/pricing-overrides', body), 400, param);

  const created = await admin<{ pricing_override: { id: string } }>('POST', '/api/governance/pricing-overrides', { provider: 'openai', model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: 0.00001, output_cost_per_token: 0.00002 });
  assert.equal(created.status, 201, created.text);
  const id = created.body.pricing_override.id;
  const row = rowOf((await admin<PricesInForce>('GET', '/api/governance/pricing')).body, 'openai', 'gpt-4o');
  assert.equal(row.source, 'override');
  assert.deepEqual([row.input_per_million, row.output_per_million], [10, 20]);
  assert.equal(row.override?.id, id);

  const a = await admin<PlaygroundAnswer>('POST', '/api/playground', { virtual_key_id: VK.id, request: chat('openai/gpt-4o', false) });
  assert.equal(a.status, 200, a.text);
  const r = a.body.summary.record;
  const expected = r.prompt_tokens! * 1e-5 + r.completion_tokens! * 2e-5;
  assert.ok(Math.abs(r.cost! - expected) < 1e-12, `cost ${r.cost}, expected ${expected}`);
  assert.ok(Math.abs((await logOf(r.id)).cost! - expected) < 1e-12, 'the stored record has the override price');

  // config.json edited (another setting): the override, written through /api, stays.
  g.writeConfig(config({ max_request_body_size_mb: 40 }));
  await eventually(async () => {
    const doc = await admin<{ client: { max_request_body_size_mb?: number } }>('GET', '/api/config');
    assert.equal(doc.body.client.max_request_body_size_mb, 40);
  }, 5000);
  const listed = await admin<{ pricing_overrides: { id: string; owner?: string }[] }>('GET', '/api/governance/pricing-overrides');
  assert.deepEqual(listed.body.pricing_overrides.map((o) => [o.id, o.owner]), [[id, 'store']]);

  const appDir = g.appDir;
  await g.stop();
  g = await startGateway(undefined, { appDir });
  admin = apiClient(g, basic('admin', PASSWORD));
  assert.equal(rowOf((await admin<PricesInForce>('GET', '/api/governance/pricing')).body, 'openai', 'gpt-4o').source, 'override');
  // Removed: back to the built-in price.
  assert.equal((await admin('DELETE', `/api/governance/pricing-overrides/${id}`)).status, 200);
  assert.equal(rowOf((await admin<PricesInForce>('GET', '/api/governance/pricing')).body, 'openai', 'gpt-4o').source, 'builtin');
});
