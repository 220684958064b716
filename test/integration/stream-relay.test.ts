// OpenAI-format client, OpenAI-format upstream: a streamed chat reaches the client as the upstream
// wrote each event (its spacing, key order and escapes kept; nothing parsed and written again),
// with only the gateway's extra_fields added, whether the gateway relays the events' bytes (nothing
// needs to read them) or reads them as items (content logging on). Usage is still metered: with
// logging on and content off, the record has the stream's tokens and cost.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';

/** Every token costs a cent. */
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];

// As an upstream may write them: spaces, its own key order, \u escapes and raw UTF-8, a float
// written 1.50; a JSON round trip would change every one of these.
const EVENTS = [
  '{"id":"chatcmpl-relay","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}',
  '{ "choices" : [ { "index" : 0, "delta" : { "content" : "caf\\u00e9 \u00e9t\u00e9 \ud83d\ude00" }, "finish_reason" : null } ], "id" : "chatcmpl-relay", "object":"chat.completion.chunk", "created":1700000000, "model":"gpt-4o", "x_score": 1.50 }',
  '{"id":"chatcmpl-relay","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" \\"quoted\\" {braces}"},"finish_reason":null}]}',
  '{"id":"chatcmpl-relay","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
  '{"id":"chatcmpl-relay","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}',
];
const USAGE_EVENT = EVENTS.length - 1;

let mock: MockProvider;
const gateways: InProcessGateway[] = [];
before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await mock.close();
});

async function gateway(client: Record<string, unknown>): Promise<InProcessGateway> {
  const g = await startGateway({ providers: mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN } }), client });
  gateways.push(g);
  return g;
}

/** The upstream answers with EVENTS, framed as `framing` says, then [DONE]. */
function scriptUpstream(eol = '\n'): void {
  mock.inject({ format: 'openai', reply: { events: [...EVENTS, '[DONE]'].map((e) => `data: ${e}${eol}${eol}`) } });
}

async function streamedChat(g: InProcessGateway, body: Record<string, unknown> = {}): Promise<string> {
  const res = await request(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'relay me' }], stream: true, ...body }),
  });
  const text = await res.body.text();
  assert.equal(res.statusCode, 200, text);
  assert.match(String(res.headers['content-type']), /^text\/event-stream/);
  return text;
}

/** Each frame of the answer with its extra_fields taken out again, and those extra_fields. */
function unsplice(answer: string): { payloads: string[]; extras: Record<string, unknown>[] } {
  assert.ok(answer.endsWith('data: [DONE]\n\n'), answer.slice(-100));
  const frames = answer.split('\n\n').filter(Boolean).slice(0, -1);
  const payloads: string[] = [];
  const extras: Record<string, unknown>[] = [];
  for (const frame of frames) {
    const m = /^data: (.*),"extra_fields":(\{[^{}]*\})\}$/s.exec(frame);
    assert.ok(m, `a frame without extra_fields spliced last: ${frame}`);
    payloads.push(`${m[1]}}`);
    extras.push(JSON.parse(m[2]) as Record<string, unknown>);
  }
  return { payloads, extras };
}

describe('a streamed chat between OpenAI-format client and upstream', () => {
  let plain: InProcessGateway;
  let contentLogged: InProcessGateway;
  let logged: InProcessGateway;
  before(async () => {
    plain = await gateway({ enable_logging: false });
    contentLogged = await gateway({ enable_logging: true });
    logged = await gateway({ enable_logging: true, disable_content_logging: true });
  });

  test('every event is the upstream\'s payload byte for byte, extra_fields added; the usage chunk only on request', async () => {
    for (const includeUsage of [false, true]) {
      scriptUpstream();
      const answer = await streamedChat(plain, includeUsage ? { stream_options: { include_usage: true } } : {});
      const { payloads, extras } = unsplice(answer);
      const expected = includeUsage ? EVENTS : EVENTS.filter((_, i) => i !== USAGE_EVENT);
      assert.deepEqual(payloads, expected);
      extras.forEach((x, i) => assert.deepEqual(x, { provider: 'openai', request_type: 'chat_completion_stream', model_requested: 'openai/gpt-4o', chunk_index: i }));
    }
  });

  test('CRLF framing and keep-alive comments from the upstream: the same events reach the client', async () => {
    mock.inject({ format: 'openai', reply: { events: [': keep-alive\r\n\r\n', ...[...EVENTS, '[DONE]'].map((e) => `data: ${e}\r\n\r\n`)] } });
    const { payloads } = unsplice(await streamedChat(plain));
    assert.deepEqual(payloads, EVENTS.filter((_, i) => i !== USAGE_EVENT));
  });

  test('the relayed answer and the answer read as items (content logging on) are the same bytes', async () => {
    scriptUpstream();
    const relayed = await streamedChat(plain, { stream_options: { include_usage: true } });
    scriptUpstream();
    const read = await streamedChat(contentLogged, { stream_options: { include_usage: true } });
    assert.equal(relayed, read);
  });

  test('relayed as bytes (content off) or read as items (content on): the same bytes, usage and cost, however the upstream\'s writes split the events', async () => {
    const body = [...EVENTS, '[DONE]'].map((e) => `data: ${e}\n\n`).join('');
    const usage = body.indexOf('"usage":{');
    const emoji = body.indexOf('\ud83d');
    const cuts: Record<string, number[]> = {
      'a write per event': [],
      'events split across writes': [30, 400, 401, 700],
      'between the two line ends of a blank line': [body.indexOf('\n\n') + 1],
      'next to a multibyte character': [emoji, emoji + 2, body.indexOf('\u00e9')],
      'inside the usage chunk': [usage - 5, usage + 3, usage + 25],
    };
    const sent: { name: string; ids: string[]; answers: Buffer[] }[] = [];
    for (const [name, at] of Object.entries(cuts)) {
      const ends = [...new Set([...at, body.length])].sort((a, b) => a - b);
      const pieces = at.length ? ends.map((end, i) => body.slice(i ? ends[i - 1] : 0, end)) : [...EVENTS, '[DONE]'].map((e) => `data: ${e}\n\n`);
      const one = { name, ids: [] as string[], answers: [] as Buffer[] };
      for (const g of [logged, contentLogged]) {
        mock.inject({ format: 'openai', reply: { events: pieces } });
        const id = `relay-${name.replace(/\W+/g, '-')}-${one.ids.length}`;
        const res = await request(`${g.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': id },
          body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'relay me' }], stream: true, stream_options: { include_usage: true } }),
        });
        one.answers.push(Buffer.from(await res.body.arrayBuffer()));
        one.ids.push(id);
      }
      assert.deepEqual(one.answers[0], one.answers[1], name);
      assert.deepEqual(unsplice(one.answers[0].toString()).payloads, EVENTS, name);
      sent.push(one);
    }
    const recordOf = async (g: InProcessGateway, id: string) => {
      const found = await request(`${g.url}/api/logs?request_id=${id}`);
      const { logs } = (await found.body.json()) as { logs: Record<string, unknown>[] };
      assert.equal(logs.length, 1, `no record of ${id} yet`);
      return logs[0];
    };
    await eventually(async () => {
      for (const { name, ids } of sent) {
        const [bytes, items] = [await recordOf(logged, ids[0]), await recordOf(contentLogged, ids[1])];
        assert.deepEqual(bytes.token_usage, items.token_usage, name);
        assert.deepEqual(pick(bytes.token_usage, ['prompt_tokens', 'completion_tokens', 'total_tokens']), { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }, name);
        assert.equal(bytes.cost, items.cost, name);
        assert.ok(Math.abs(Number(bytes.cost) - 0.18) < 1e-9, `${name}: cost ${String(bytes.cost)}`);
      }
    }, 5000);
  });

  test('logging on, content off: the record has the stream\'s usage, cost and TTFT', async () => {
    scriptUpstream();
    const answer = await streamedChat(logged);
    assert.deepEqual(unsplice(answer).payloads, EVENTS.filter((_, i) => i !== USAGE_EVENT));
    let record: Record<string, unknown> & { token_usage?: Record<string, number> } = {};
    await eventually(async () => {
      const res = await request(`${logged.url}/api/logs?limit=10`);
      const { logs } = (await res.body.json()) as { logs: (typeof record)[] };
      const hit = logs.find((r) => r.stream === true);
      assert.ok(hit, 'no record of the stream yet');
      record = hit;
    }, 2000);
    assert.equal(record.status, 'success');
    assert.deepEqual(
      { prompt: record.token_usage?.prompt_tokens, completion: record.token_usage?.completion_tokens, total: record.token_usage?.total_tokens },
      { prompt: 11, completion: 7, total: 18 },
    );
    assert.ok(Math.abs(Number(record.cost) - 0.18) < 1e-9, `cost ${String(record.cost)}`);
    assert.ok(typeof record.ttft === 'number' && record.ttft <= Number(record.latency), `ttft ${String(record.ttft)}`);
  });
});

function pick(value: unknown, keys: string[]): Record<string, unknown> {
  const v = value as Record<string, unknown>;
  return Object.fromEntries(keys.map((k) => [k, v?.[k]]));
}
