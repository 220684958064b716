// MCP and trust: a client request counts once whatever runs inside it (agent turns are child records
// of its one counted log record and fold into its one request metric), MCP tools reach only callers whose virtual key grants
// them or, by an explicit per-client opt-in, callers without a key, and /v1/mcp/tool/execute holds
// to the same authentication as /mcp. Real gateways, the official SDKs, a real stdio MCP server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;
const VK = 'sk-bf-agent-0123456789';

let mock: MockProvider | undefined;
const gateways: InProcessGateway[] = [];

before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await mock?.close();
});

const stdio = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  connection_type: 'stdio',
  stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] },
  tools_to_execute: ['*'],
  ...more,
});

const agentKey = {
  id: 'agent',
  name: 'agent',
  value: VK,
  provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }],
  mcp_configs: [{ mcp_client_name: 'open', tools_to_execute: ['*'] }, { mcp_client_name: 'closed', tools_to_execute: ['*'] }],
};

async function gateway(config: Record<string, unknown>, clients: number): Promise<InProcessGateway> {
  const g = await startGateway({ providers: mockProviders(mock!.url), ...config });
  gateways.push(g);
  await eventually(async () => {
    const res = await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients');
    assert.deepEqual(res.body.map((c) => c.state), Array(clients).fill('connected'));
  }, 30_000);
  return g;
}

interface LogEntry {
  id: string;
  parent_request_id?: string;
  requested_model?: string;
  status: string;
  provider?: string;
  model?: string;
  token_usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  cost?: number;
  input_content?: string;
}

async function logs(g: InProcessGateway, query = ''): Promise<LogEntry[]> {
  const res = await apiClient(g)<{ logs: LogEntry[] }>('GET', `/api/logs?limit=1000${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body.logs;
}

async function stats(g: InProcessGateway): Promise<{ total_requests: number; total_tokens: number; total_cost: number }> {
  const res = await apiClient(g)<{ total_requests: number; total_tokens: number; total_cost: number }>('GET', '/api/logs/stats');
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** skybridge_requests_total for chat, all labels summed. */
async function chatCount(g: InProcessGateway): Promise<number> {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^skybridge_requests_total\{operation="chat",[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

/** The usage the mock reported on the chat answers since `from`. */
function mockTokens(from: number): { prompt: number; completion: number } {
  let prompt = 0;
  let completion = 0;
  for (const r of mock!.requests.slice(from)) {
    if (!r.path.endsWith('/chat/completions')) continue;
    const u = (JSON.parse(r.responseBody ?? '{}') as { usage?: { prompt_tokens: number; completion_tokens: number } }).usage;
    prompt += u?.prompt_tokens ?? 0;
    completion += u?.completion_tokens ?? 0;
  }
  return { prompt, completion };
}

const chat = (g: InProcessGateway, key?: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0, ...(key && { defaultHeaders: { 'x-bf-vk': key } }) }).chat.completions;

let main: InProcessGateway;
const mainGateway = async (): Promise<InProcessGateway> =>
  (main ??= await gateway(
    {
      client: { enable_logging: true },
      governance: { virtual_keys: [agentKey] },
      mcp: { client_configs: [stdio('open', { tools_to_auto_execute: ['echo'], allow_without_virtual_key: true }), stdio('closed', { tools_to_auto_execute: ['echo'] })] },
    },
    2,
  ));

test('an agent request is one counted log record and one count, with the summed tokens and cost of its turns and the model asked for; its turns are its children', async () => {
  const g = await mainGateway();
  const before = { records: (await logs(g)).length, count: await chatCount(g), mock: mock!.requests.length, stats: await stats(g) };

  // Tools offered, none run: one turn.
  const plain = await chat(g, VK).create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'count-once plain' }], tool_choice: 'none' });
  assert.match(plain.choices[0].message.content ?? '', /count-once plain/);
  // A tool run by the gateway: two turns.
  const ran = await chat(g, VK).create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'count-once agent' }], tool_choice: { type: 'function', function: { name: 'open-echo' } } });
  assert.match(ran.choices[0].message.content ?? '', /echo: count-once agent/);
  assert.equal(mock!.requests.length - before.mock, 3, 'three model turns in all');
  const tokens = mockTokens(before.mock);
  assert.ok(tokens.prompt > 0 && tokens.completion > 0);

  let fresh: LogEntry[] = [];
  await eventually(async () => {
    const all = await logs(g);
    fresh = all.slice(0, all.length - before.records);
    assert.equal(fresh.length, 2, JSON.stringify(fresh));
  }, 10_000);
  // No record stays behind as a separate request, however late the writer is.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await logs(g)).length - before.records, 2);
  for (const e of fresh) {
    assert.equal(e.parent_request_id, undefined);
    assert.equal(e.status, 'success');
    assert.equal(e.provider, 'openai');
    assert.equal(e.model, 'gpt-4o');
    assert.ok(typeof e.cost === 'number' && e.cost > 0, `cost known: ${JSON.stringify(e)}`);
  }
  const sum = fresh.reduce((a, e) => ({ prompt: a.prompt + e.token_usage.prompt_tokens, completion: a.completion + e.token_usage.completion_tokens }), { prompt: 0, completion: 0 });
  assert.deepEqual(sum, tokens, 'the records carry every turn’s tokens, once');
  assert.equal((await chatCount(g)) - before.count, 2, 'two client requests, two counts');

  // Each turn is a child record of its agent request's: listed under it, with its own tokens.
  const [agent, single] = fresh; // newest first: the request that ran a tool, then the plain one
  assert.equal(agent.token_usage.total_tokens > single.token_usage.total_tokens, true);
  let children: LogEntry[] = [];
  await eventually(async () => {
    children = await logs(g, `&parent_request_id=${agent.id}&sort_by=timestamp&order=asc`);
    assert.equal(children.length, 2, JSON.stringify(children));
  }, 10_000);
  for (const c of children) {
    assert.equal(c.parent_request_id, agent.id);
    assert.equal(c.status, 'success');
    assert.equal(c.model, 'gpt-4o');
  }
  const childSum = children.reduce((a, e) => ({ prompt: a.prompt + e.token_usage.prompt_tokens, completion: a.completion + e.token_usage.completion_tokens }), { prompt: 0, completion: 0 });
  assert.deepEqual(childSum, { prompt: agent.token_usage.prompt_tokens, completion: agent.token_usage.completion_tokens }, 'the parent carries the sum of its turns');
  assert.ok(Math.abs(children.reduce((a, c) => a + (c.cost ?? 0), 0) - agent.cost!) < 1e-9, 'and their summed cost');
  assert.equal((await logs(g, `&parent_request_id=${single.id}`)).length, 1, 'the plain request ran one turn');
  // The totals count client requests: two, with the tokens of the turns once.
  const after = await stats(g);
  assert.equal(after.total_requests - before.stats.total_requests, 2, JSON.stringify({ before: before.stats, after }));
  assert.equal(after.total_tokens - before.stats.total_tokens, tokens.prompt + tokens.completion);
});

test('a failed agent request is one error record naming the model asked for, and one count', async () => {
  const g = await mainGateway();
  const before = { records: (await logs(g)).length, count: await chatCount(g) };
  mock!.inject({ format: 'openai', status: 500 });
  await assert.rejects(chat(g, VK).create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'count-once failure' }] }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 500);
  let fresh: LogEntry[] = [];
  await eventually(async () => {
    const all = await logs(g);
    fresh = all.slice(0, all.length - before.records);
    assert.equal(fresh.length, 1);
  }, 10_000);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await logs(g)).length - before.records, 1);
  assert.equal(fresh[0].status, 'error');
  assert.equal(fresh[0].provider, 'openai');
  assert.equal(fresh[0].model, 'gpt-4o');
  assert.equal((await chatCount(g)) - before.count, 1);
});

test('MCP tools reach a caller without a virtual key only from clients that opt in', async () => {
  const g = await mainGateway();
  await chat(g).create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'anonymous tools' }], tool_choice: 'none' });
  const sent = mock!.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as { tools?: { function: { name: string } }[] };
  assert.ok(sent.tools?.some((t) => t.function.name === 'open-echo'), 'the opted-in client’s tools');
  assert.ok(sent.tools!.every((t) => t.function.name.startsWith('open-')), 'no tool of the client that did not opt in');
  // The key granted both clients.
  await chat(g, VK).create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'keyed tools' }], tool_choice: 'none' });
  const keyed = mock!.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as { tools: { function: { name: string } }[] };
  assert.ok(keyed.tools.some((t) => t.function.name === 'closed-echo'));
  // Executing a tool of a client that did not opt in: refused, naming the field.
  const res = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'closed-echo', arguments: '{"query":"x"}' } }) });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: { param: string } }).error.param, 'function.name');
});

test('by default a caller without a virtual key gets no MCP tools, and both tool routes answer 401', async () => {
  const g = await gateway({ governance: { virtual_keys: [agentKey] }, mcp: { client_configs: [stdio('open', { tools_to_auto_execute: ['echo'] })] } }, 1);
  const before = mock!.requests.length;
  const answer = await chat(g).create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'no tools for anonymous' }] });
  assert.match(answer.choices[0].message.content ?? '', /Mock reply to: no tools for anonymous/);
  const sent = mock!.requests.slice(before).map((r) => r.body as { tools?: unknown });
  assert.equal(sent.length, 1);
  assert.equal(sent[0].tools, undefined);

  const exec = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'open-echo', arguments: '{"query":"x"}' } }) });
  assert.equal(exec.status, 401);
  const err = ((await exec.json()) as { error: { type: string; message: string } }).error;
  assert.equal(err.type, 'authentication_error');
  assert.match(err.message, /virtual key is required on \/v1\/mcp\/tool\/execute/);
  const client = new Client({ name: 'ide', version: '1.0.0' });
  await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`))), /401|virtual key/);
  // With the key: the same call runs.
  const keyed = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': VK }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'open-echo', arguments: '{"query":"x"}' } }) });
  assert.equal(keyed.status, 200);
});

test('tool arguments nested deeper than request bodies may be are refused: 400 on /v1/mcp/tool/execute, an error result in agent mode', async () => {
  const g = await mainGateway();
  const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
  const exec = (body: unknown, format = 'chat') =>
    fetch(`${g.url}/v1/mcp/tool/execute?format=${format}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': VK }, body: JSON.stringify(body) });
  const chatRes = await exec({ id: 'c', type: 'function', function: { name: 'open-echo', arguments: deep } });
  assert.equal(chatRes.status, 400);
  const err = ((await chatRes.json()) as { error: { param: string; message: string } }).error;
  assert.equal(err.param, 'function.arguments');
  assert.match(err.message, /nested deeper than 128 levels/);
  const respRes = await exec({ call_id: 'c', name: 'open-echo', arguments: deep }, 'responses');
  assert.equal(respRes.status, 400);
  assert.equal(((await respRes.json()) as { error: { param: string } }).error.param, 'arguments');
  // A model's call with such arguments is not run: the model is told why.
  const answer = await chat(g, VK).create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: `CALL open-echo ${deep}` }] });
  assert.match(answer.choices[0].message.content ?? '', /Tool said: Error: the arguments of tool 'open-echo' are nested deeper than 128 levels/);
  // The gateway still serves.
  assert.equal((await exec({ id: 'c', type: 'function', function: { name: 'open-echo', arguments: '{"query":"fine"}' } })).status, 200);
});
