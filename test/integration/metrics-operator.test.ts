// The metrics an operator charts first, scraped from /metrics after traffic the official openai SDK
// drives: spend by provider, model, virtual key and team (the same dollars the budgets were charged),
// budget and rate-limit headroom per virtual key and team, MCP tool calls and their latency,
// requests in flight, and build info.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;
const VK = 'sk-bf-metrics-spender-0123456789';
const LONE_VK = 'sk-bf-metrics-lone-0123456789';
// No MCP tools on this one: a request with tools runs as an agent request whose turn is admitted
// against the limits too, which would count two requests for one here.
const COUNTED_VK = 'sk-bf-metrics-counted-0123456789';

let mock: MockProvider;
let g: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { enforce_auth_on_inference: true },
    governance: {
      budgets: [
        { id: 'vk-budget', max_limit: 5, reset_duration: '1d' },
        { id: 'team-budget', max_limit: 10, reset_duration: '1d' },
      ],
      rate_limits: [{ id: 'count-rate', request_max_limit: 100, request_reset_duration: '1h', token_max_limit: 1_000_000, token_reset_duration: '1h' }],
      teams: [{ id: 'platform', name: 'platform', budget_id: 'team-budget' }],
      virtual_keys: [
        {
          id: 'spender',
          name: 'spender',
          value: VK,
          team_id: 'platform',
          budget_id: 'vk-budget',
          provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }],
          mcp_configs: [{ mcp_client_name: 'local', tools_to_execute: ['*'] }],
        },
        { id: 'lone', name: 'lone', value: LONE_VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] },
        { id: 'counted', name: 'counted', value: COUNTED_VK, rate_limit_id: 'count-rate', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] },
      ],
    },
    mcp: {
      client_configs: [{ name: 'local', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] }, tools_to_execute: ['*'] }],
    },
  });
  await eventually(async () => {
    const res = await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients');
    assert.equal(res.body[0]?.state, 'connected');
  }, 30_000);
});

after(async () => {
  await g?.stop();
  await mock?.close();
});

const client = (key: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'none', maxRetries: 0, defaultHeaders: { 'x-bf-vk': key } });

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** One scrape of /metrics, parsed: the samples of `name`. */
async function scrape(name: string): Promise<Sample[]> {
  const res = await fetch(`${g.url}/metrics`);
  assert.equal(res.status, 200);
  const out: Sample[] = [];
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

const only = (samples: Sample[], labels: Record<string, string>): number | undefined =>
  samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

test('spend by provider, model, virtual key and team: the dollars the budgets were charged', async () => {
  const first = await client(VK).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hello' }] });
  assert.ok(first.usage && first.usage.total_tokens > 0);
  await client(VK).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'and again' }] });
  await client(LONE_VK).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'no team' }] });

  let spent = 0;
  await eventually(async () => {
    const cost = await scrape('skybridge_cost_usd_total');
    spent = only(cost, { provider: 'openai', model: 'gpt-4o', virtual_key: 'spender', team: 'platform' }) ?? 0;
    assert.ok(spent > 0, 'the key and its team spent');
    assert.ok((only(cost, { virtual_key: 'lone', team: '' }) ?? 0) > 0, 'a key without a team spends under team ""');
    // What the budgets say is left is what they were charged: the same dollars.
    const left = await scrape('skybridge_budget_remaining_usd');
    assert.ok(Math.abs((only(left, { level: 'virtual_key', id: 'spender' }) ?? NaN) - (5 - spent)) < 1e-9, 'the key budget left');
    assert.ok(Math.abs((only(left, { level: 'team', id: 'platform' }) ?? NaN) - (10 - spent)) < 1e-9, 'the team budget left');
    const ratio = await scrape('skybridge_budget_remaining_ratio');
    assert.ok(Math.abs((only(ratio, { level: 'virtual_key', id: 'spender' }) ?? NaN) - (5 - spent) / 5) < 1e-9);
  }, 5000);
  // A key without a limit of its own has no headroom series.
  assert.equal(only(await scrape('skybridge_budget_remaining_usd'), { id: 'lone' }), undefined);
});

test('rate-limit headroom per virtual key, by unit', async () => {
  const start = await scrape('skybridge_rate_limit_remaining');
  assert.equal(only(start, { level: 'virtual_key', id: 'counted', unit: 'requests' }), 100);
  assert.equal(only(start, { level: 'virtual_key', id: 'counted', unit: 'tokens' }), 1_000_000);
  let tokens = 0;
  for (let i = 0; i < 3; i++) tokens += (await client(COUNTED_VK).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: `count me ${i}` }] })).usage!.total_tokens;
  await eventually(async () => {
    const after = await scrape('skybridge_rate_limit_remaining');
    assert.equal(only(after, { level: 'virtual_key', id: 'counted', unit: 'requests' }), 97);
    assert.equal(only(after, { level: 'virtual_key', id: 'counted', unit: 'tokens' }), 1_000_000 - tokens);
    const ratio = await scrape('skybridge_rate_limit_remaining_ratio');
    assert.equal(only(ratio, { level: 'virtual_key', id: 'counted', unit: 'requests' }), 0.97);
  }, 5000);
});

test('MCP tool calls by client, tool and outcome, and their latency', async () => {
  const execute = (tool: string) =>
    fetch(`${g.url}/v1/mcp/tool/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bf-vk': VK },
      body: JSON.stringify({ id: 'c', type: 'function', function: { name: `local-${tool}`, arguments: '{"query":"hi","ms":50}' } }),
    });
  for (const tool of ['echo', 'echo', 'fail', 'slow']) assert.equal((await execute(tool)).status, 200);
  const calls = await scrape('skybridge_mcp_tool_calls_total');
  assert.equal(only(calls, { client: 'local', tool: 'echo', outcome: 'success' }), 2);
  assert.equal(only(calls, { client: 'local', tool: 'fail', outcome: 'tool_error' }), 1);
  assert.equal(only(calls, { client: 'local', tool: 'slow', outcome: 'success' }), 1);
  const count = await scrape('skybridge_mcp_tool_call_duration_seconds_count');
  assert.equal(only(count, { client: 'local', outcome: 'success' }), 3);
  // The slow tool waited 50 ms: the sum of the successful calls' durations shows it.
  const sum = only(await scrape('skybridge_mcp_tool_call_duration_seconds_sum'), { client: 'local', outcome: 'success' })!;
  assert.ok(sum >= 0.05, `duration sum ${sum}`);
});

test('requests in flight: a slow answer counts until it is finished (the scrape counts itself)', async () => {
  mock.inject({ format: 'openai', latencyMs: 1500 });
  const slow = client(VK).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'slowly' }] });
  await eventually(async () => {
    const [inFlight] = await scrape('skybridge_requests_in_flight');
    assert.ok(inFlight.value >= 2, `in flight: ${inFlight.value}`);
  }, 5000);
  await slow;
  await eventually(async () => {
    const [inFlight] = await scrape('skybridge_requests_in_flight');
    assert.equal(inFlight.value, 1);
  }, 5000);
});

test('build info names the version and the Node.js version', async () => {
  const [info] = await scrape('skybridge_build_info');
  assert.equal(info.value, 1);
  assert.match(info.labels.version, /^\d+\.\d+\.\d+/);
  assert.equal(info.labels.node_version, process.versions.node);
});
