// Streamed agent mode on /v1/responses, through the official openai SDK's Responses streaming
// (responses.stream and create({stream: true})) against a real MCP server over streamable HTTP:
// auto-executable tool calls run in the gateway and the final answer streams as one Responses
// event stream (native Responses provider and bridged over chat); other tool calls come back to
// the application.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';

let mock: MockProvider;
let server: TestMcpServer;
let g: InProcessGateway;
let client: OpenAI;

before(async () => {
  mock = await startMockProvider();
  server = await startTestMcpServer();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { enable_logging: true },
    mcp: { client_configs: [{ name: 'web', connection_type: 'http', connection_string: server.httpUrl, tools_to_execute: ['*'], tools_to_auto_execute: ['echo'], allow_without_virtual_key: true }] },
  });
  await eventually(async () => {
    const res = await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients');
    assert.equal(res.body[0]?.state, 'connected');
  }, 30_000);
  client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
});
after(async () => {
  await g.stop();
  await server.close();
  await mock.close();
});

const upstreamTurns = (since: number, suffix: string) => mock.requests.slice(since).filter((r) => r.path.endsWith(suffix));

test('responses.stream runs the auto-executable tool and streams the final answer as one response', async () => {
  const before = mock.requests.length;
  const toolCallsBefore = server.seen.filter((s) => s.method === 'POST').length;
  const stream = client.responses.stream({ model: 'openai/gpt-4o', input: 'weather in Paris', tool_choice: { type: 'function', name: 'web-echo' } });
  const seen: { type: string; sequence_number: number }[] = [];
  let text = '';
  for await (const ev of stream) {
    seen.push({ type: ev.type, sequence_number: ev.sequence_number });
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  const final = await stream.finalResponse();
  // The final turn's text arrived as deltas, and the response is whole: no function call left in it.
  assert.match(text, /echo: weather in Paris/);
  assert.match(final.output_text, /echo: weather in Paris/);
  assert.equal(final.status, 'completed');
  assert.deepEqual(final.output.map((o) => o.type), ['message']);
  // One stream: created once, completed once, sequence numbers 0, 1, 2, ...
  assert.equal(seen.filter((e) => e.type === 'response.created').length, 1);
  assert.equal(seen.filter((e) => e.type === 'response.completed').length, 1);
  assert.equal(seen.at(-1)?.type, 'response.completed');
  assert.deepEqual(seen.map((e) => e.sequence_number), seen.map((_, i) => i));
  assert.ok(!seen.some((e) => e.type.startsWith('response.function_call_arguments')), 'the run call is not shown');
  // Two model turns; the second carries the call and the real server's answer.
  const turns = upstreamTurns(before, '/responses');
  assert.equal(turns.length, 2);
  const input = (turns[1].body as { input: { type?: string; output?: string; name?: string }[] }).input;
  assert.deepEqual(input.map((i) => i.type ?? 'message'), ['message', 'function_call', 'function_call_output']);
  assert.equal(input[1].name, 'web-echo');
  assert.equal(input[2].output, 'echo: weather in Paris');
  assert.ok(server.seen.filter((s) => s.method === 'POST').length > toolCallsBefore, 'the MCP server ran the call');
  // The call is in the MCP logs, from a responses request.
  await eventually(async () => {
    const logs = await apiClient(g)<{ logs: { tool_name: string; source: string; arguments: unknown }[] }>('GET', '/api/mcp-logs?tool_names=echo&content_search=Paris');
    assert.deepEqual(logs.body.logs.map((l) => [l.tool_name, l.source, l.arguments]), [['echo', 'responses', { query: 'weather in Paris' }]]);
  }, 10_000);
});

test('create({stream: true}) over a provider bridged through chat streams the final answer too', async () => {
  const before = mock.requests.length;
  const stream = await client.responses.create({ model: 'anthropic/claude-3-5-sonnet-20241022', input: 'tides in Brest', tool_choice: { type: 'function', name: 'web-echo' }, stream: true });
  let text = '';
  let completed: OpenAI.Responses.Response | undefined;
  let created: string | undefined;
  for await (const ev of stream) {
    if (ev.type === 'response.created') created = ev.response.id;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') completed = ev.response;
  }
  assert.match(text, /echo: tides in Brest/);
  assert.ok(completed);
  assert.equal(completed.id, created, 'the completed response is the stream that was created');
  assert.ok(!completed.output.some((o) => o.type === 'function_call'));
  assert.equal(upstreamTurns(before, '/messages').length, 2, 'two model turns upstream');
});

test('a tool that is not auto-executable comes back to the application in the stream', async () => {
  const before = mock.requests.length;
  const stream = client.responses.stream({ model: 'openai/gpt-4o', input: 'add these', tool_choice: { type: 'function', name: 'web-add' } });
  const types: string[] = [];
  for await (const ev of stream) types.push(ev.type);
  const final = await stream.finalResponse();
  const call = final.output.find((o) => o.type === 'function_call');
  assert.equal(call?.name, 'web-add');
  assert.ok(types.includes('response.function_call_arguments.delta'));
  assert.equal(upstreamTurns(before, '/responses').length, 1, 'one model turn: the application runs the call');
});

test('the streamed agent request is logged once, with the tokens of both turns', async () => {
  const stream = client.responses.stream({ model: 'openai/gpt-4o', input: 'logged streamed agent', tool_choice: { type: 'function', name: 'web-echo' } });
  const final = await stream.finalResponse();
  assert.match(final.output_text, /echo: logged streamed agent/);
  type Entry = { id: string; parent_request_id?: string; status: string; stream: boolean; token_usage: { prompt_tokens: number } };
  let entries: Entry[] = [];
  await eventually(async () => {
    entries = (await apiClient(g)<{ logs: Entry[] }>('GET', '/api/logs?limit=100&content_search=logged%20streamed%20agent')).body.logs;
    assert.equal(entries.length, 1, JSON.stringify(entries));
  }, 10_000);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await apiClient(g)<{ logs: Entry[] }>('GET', '/api/logs?limit=100&content_search=logged%20streamed%20agent')).body.logs.length, 1);
  assert.equal(entries[0].parent_request_id, undefined);
  assert.equal(entries[0].status, 'success');
  assert.equal(entries[0].stream, true);
  assert.ok(entries[0].token_usage.prompt_tokens > (final.usage?.input_tokens ?? 0), JSON.stringify([entries[0], final.usage]));
});
