// Code mode through a running gateway: a code-mode client's tools reach the model only as the four
// meta-tools; executeToolCode runs in agent mode when its pre-flight passes, and an aliased call to a
// tool outside tools_to_auto_execute never runs unattended; code the application approves runs
// through /v1/mcp/tool/execute, still held to tools_to_execute. The mock provider is scripted
// (`CALL <tool> <json>`) to send the code.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;

let mock: MockProvider;
let g: RunningGateway;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    mcp: {
      client_configs: [
        { name: 'local', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] }, is_code_mode_client: true, tools_to_execute: ['echo', 'add'], tools_to_auto_execute: ['echo'], allow_without_virtual_key: true },
      ],
    },
  });
  await eventually(async () => {
    const res = await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients');
    assert.equal(res.body[0]?.state, 'connected');
  }, 20_000);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

const client = () => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
const code = (src: string) => `CALL executeToolCode ${JSON.stringify({ code: src })}`;
const chat = (text: string) => client().chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: text }] });

async function toolCalls(name: string, search?: string): Promise<number> {
  const q = search === undefined ? '' : `&content_search=${encodeURIComponent(search)}`;
  const res = await apiClient(g)<{ pagination: { total_count: number } }>('GET', `/api/mcp-logs?tool_names=${name}&server_labels=local${q}`);
  return res.body.pagination.total_count;
}

/** Calls echo with a fresh marker and waits for its record: the log is written in call order, so every call made before is in it too. */
async function echoSettled(): Promise<void> {
  const marker = `settle-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const res = await fetch(`${g.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'executeToolCode', arguments: JSON.stringify({ code: `result = local.echo(query='${marker}')` }) } }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await eventually(async () => assert.equal(await toolCalls('echo', marker), 1), 10_000);
}

test('a code-mode client is shown only as the four meta-tools', async () => {
  await client().chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }], tool_choice: 'none' });
  const sent = mock.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as { tools: { function: { name: string } }[] };
  assert.deepEqual(sent.tools.map((t) => t.function.name).sort(), ['executeToolCode', 'getToolDocs', 'listToolFiles', 'readToolFile']);
});

test('agent mode runs code whose calls are all auto-executable', async () => {
  const answer = await chat(code("result = local.echo(query='from code')"));
  assert.match(answer.choices[0].message.content ?? '', /^Tool said: .*echo: from code/s);
});

test('code calling a tool outside tools_to_auto_execute goes back to the application', async () => {
  const answer = await chat(code('result = local.add(a=1, b=2)'));
  const call = answer.choices[0].message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  assert.equal(call.function.name, 'executeToolCode');
});

test('an aliased call to a tool outside tools_to_auto_execute never runs unattended', async () => {
  const before = await toolCalls('add');
  const answer = await chat(code('g = local\nresult = g.add(a=1, b=2)'));
  // Whatever the scan decided, add never ran unattended (once a later call is logged, this one would be).
  await echoSettled();
  assert.equal(await toolCalls('add'), before);
  // Either the scan asked first (the call comes back to the application) or the binding refused it.
  const m = answer.choices[0].message;
  const askedFirst = (m.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall | undefined)?.function.name === 'executeToolCode';
  assert.ok(askedFirst || /not allowed|refused|auto/i.test(m.content ?? ''), JSON.stringify(m));
});

test('code the application approves runs through /v1/mcp/tool/execute, still held to tools_to_execute', async () => {
  const run = (src: string) =>
    fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'executeToolCode', arguments: JSON.stringify({ code: src }) } }) });
  const ok = (await (await run('result = local.add(a=20, b=22)')).json()) as { content: string };
  assert.match(ok.content, /42/);
  const before = await toolCalls('fail');
  const refused = (await (await run('result = local.fail()')).json()) as { content: string; is_error?: boolean };
  await echoSettled();
  assert.equal(await toolCalls('fail'), before, 'fail is not in tools_to_execute: never called');
  assert.match(refused.content, /not allowed|fail/i);
});

test('tool-call arguments follow the request-body rule: a __proto__ member is refused, the tool never called', async () => {
  const execute = (fn: { name: string; arguments: string }) =>
    fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: fn }) });
  // In the arguments string the caller sends: a 400 naming the member.
  const direct = await execute({ name: 'executeToolCode', arguments: '{"code":"result = 1","__proto__":{"code":"x"}}' });
  const err = (await direct.json()) as { error: { param: string; message: string } };
  assert.equal(direct.status, 400, JSON.stringify(err));
  assert.equal(err.error.param, 'function.arguments.__proto__');
  // In a call the code makes: the program gets an error, echo is not called.
  const res = await execute({ name: 'executeToolCode', arguments: JSON.stringify({ code: "result = local.echo(__proto__={'query': 'hidden'}, query='shown-member')" }) });
  const out = (await res.json()) as { content: string };
  assert.match(out.content, /__proto__' is not allowed/);
  // In a call the model makes (agent mode): the tool result says why, the code never runs.
  const agent = await chat(`CALL executeToolCode {"code":"result = local.echo(query='agent-member')","__proto__":{"code":"y"}}`);
  assert.match(agent.choices[0].message.content ?? '', /^Tool said: .*arguments\.__proto__: '__proto__' is not allowed/s);
  // Every call made so far is in the log once a later one is: neither echo is.
  await echoSettled();
  assert.equal(await toolCalls('echo', 'shown-member'), 0, 'echo never ran with the member');
  assert.equal(await toolCalls('echo', 'agent-member'), 0, 'echo never ran');
});

test('print lines reach the log at most 50 per caller per 10 s; the rest is counted in one line', async () => {
  const marker = `printed-${Date.now()}`;
  const res = await fetch(`${g.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'executeToolCode', arguments: JSON.stringify({ code: `for i in range(300):\n    print("${marker}", i)\nresult = 1` }) } }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { content: string; is_error?: boolean };
  assert.notEqual(body.is_error, true, body.content);
  const printed = () => g.logs().split('\n').filter((l) => l.includes('code mode print') && l.includes(marker));
  await eventually(() => assert.ok(printed().length > 0), 5_000);
  // All 300 lines ran; the log took 50 at most (earlier tests of this caller may have used some).
  assert.ok(printed().length <= 50, `${printed().length} lines logged`);
});
