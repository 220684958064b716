// What comes back from upstreams is contained: the gateway's keys never reach a client, redirects,
// answers of the wrong shape and oversized answers are 502s naming the problem on every route,
// a stream cut before its first byte falls back, `null` optional fields are accepted as OpenAI
// does, documented provider headers are forwarded, and metrics labels cannot be flooded.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';

const OPENAI_KEY = 'sk-openai-secret-value-123';
let mock: MockProvider;
let gateway: RunningGateway;
let client: OpenAI;

const provider = (format: string, key: string, extra: Record<string, unknown> = {}) => ({
  keys: [{ name: `${format}-key`, value: key, weight: 1 }],
  network_config: { base_url: `${mock.url}/${format}`, max_retries: 0 },
  ...extra,
});

before(async () => {
  mock = await startMockProvider();
  gateway = await startGateway({
    providers: {
      openai: provider('openai', OPENAI_KEY),
      anthropic: provider('anthropic', 'sk-anthropic-secret-456'),
      gemini: provider('gemini', 'gemini-secret-key-789'),
      cohere: provider('cohere', 'cohere-secret-key-000'),
      bedrock: provider('bedrock', 'bedrock-api-key-secret'),
      // A second OpenAI-format provider for fallbacks.
      backup: { ...provider('openai', 'sk-backup-secret-key'), custom_provider_config: { base_provider_type: 'openai' } },
    },
  });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  await gateway.stop();
  await mock.close();
});
beforeEach(() => mock.reset());

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

async function healthy(): Promise<void> {
  const res = await fetch(`${gateway.url}/health`);
  assert.ok(res.status < 500 || res.status === 503, `health ${res.status}`);
  assert.equal(gateway.process.exitCode, null, 'the gateway process is still running');
}

describe('secrets in upstream errors', () => {
  test('a provider echoing the key in its error message: the key is replaced before the client sees it', async () => {
    mock.inject({ format: 'openai', status: 401, message: `Incorrect API key provided: ${OPENAI_KEY}. Check it.` });
    const res = await post('/v1/chat/completions', chat('openai/gpt-4o'));
    assert.ok(!res.text.includes(OPENAI_KEY), res.text);
    assert.match(res.text, /Incorrect API key provided: \[REDACTED\]/);
  });

  test("an upstream 401 refuses the gateway's own key: a 502 naming the provider key to fix, not a 401 the client would blame on its own key", async () => {
    mock.inject({ format: 'openai', status: 401, message: 'Incorrect API key provided.' });
    const res = await post('/v1/chat/completions', chat('openai/gpt-4o'));
    assert.equal(res.status, 502);
    const body = JSON.parse(res.text) as { is_bifrost_error: boolean; error: { code: string; message: string } };
    assert.equal(body.error.code, 'provider_auth_failed');
    assert.equal(body.is_bifrost_error, true);
    assert.match(body.error.message, /provider 'openai' refused the gateway's key .*providers\.openai\.keys/);
  });

  test('a plain-text error body with the key, and a stream error event with it, are scrubbed too', async () => {
    mock.inject({ format: 'openai', reply: { status: 500, headers: { 'content-type': 'text/plain' }, body: `upstream proxy failed for Bearer ${OPENAI_KEY}` } });
    const res = await post('/v1/chat/completions', chat('openai/gpt-4o'));
    assert.equal(res.status, 500);
    assert.ok(!res.text.includes(OPENAI_KEY), res.text);
    mock.inject({
      format: 'openai',
      reply: { events: [`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] })}\n\n`, `data: ${JSON.stringify({ error: { message: `key ${OPENAI_KEY} is over quota`, type: 'insufficient_quota' } })}\n\n`] },
    });
    const stream = await post('/v1/chat/completions', chat('openai/gpt-4o', { stream: true }));
    assert.equal(stream.status, 200);
    assert.match(stream.text, /over quota/);
    assert.ok(!stream.text.includes(OPENAI_KEY), stream.text);
  });
});

describe('redirects', () => {
  test('an upstream 302 is a 502 naming the redirect, without a Location for the client to follow', async () => {
    mock.inject({ format: 'openai', reply: { status: 302, headers: { location: 'http://169.254.169.254/latest' }, body: '' } });
    const res = await post('/v1/chat/completions', chat('openai/gpt-4o'));
    assert.equal(res.status, 502);
    assert.equal(res.headers.get('location'), null);
    const body = JSON.parse(res.text) as { error: { type: string; code: string; message: string }; extra_fields: { provider: string } };
    assert.equal(body.error.type, 'upstream_invalid_response');
    assert.equal(body.error.code, 'upstream_redirect');
    assert.match(body.error.message, /redirect \(HTTP 302\)/);
    assert.equal(body.extra_fields.provider, 'openai');
  });
});

describe('answers of the wrong shape', () => {
  const BAD = ['{"choices":"nope","data":"nope","output":"nope","text":7,"input_tokens":"x"}', 'null', '[1,2,3]', 'this is not json', '{}'];
  const form = () => {
    const f = new FormData();
    f.set('model', 'openai/whisper-1');
    f.set('file', new Blob([new Uint8Array(64)], { type: 'audio/mpeg' }), 'a.mp3');
    return f;
  };
  // Every route that reads an OpenAI-format answer, the native prefixes in front of an OpenAI target included.
  const ROUTES: [string, string, () => RequestInit][] = [
    ['chat', '/v1/chat/completions', () => json(chat('openai/gpt-4o'))],
    ['completions', '/v1/completions', () => json({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'hi' })],
    ['responses', '/v1/responses', () => json({ model: 'openai/gpt-4o', input: 'hi' })],
    ['embeddings', '/v1/embeddings', () => json({ model: 'openai/text-embedding-3-small', input: 'hi' })],
    ['images', '/v1/images/generations', () => json({ model: 'openai/dall-e-3', prompt: 'a cat' })],
    ['transcription', '/v1/audio/transcriptions', () => ({ method: 'POST', body: form() })],
    ['count tokens', '/v1/responses/input_tokens', () => json({ model: 'openai/gpt-4o', input: 'hi' })],
    ['anthropic messages', '/anthropic/v1/messages', () => json({ model: 'openai/gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })],
    ['genai', '/genai/v1beta/models/openai%2Fgpt-4o:generateContent', () => json({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })],
    ['bedrock converse', '/bedrock/model/openai%2Fgpt-4o/converse', () => json({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] })],
    ['cohere chat', '/cohere/v2/chat', () => json({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] })],
    ['azure deployment', '/openai/openai/deployments/openai%2Fgpt-4o/chat/completions?api-version=2024-10-21', () => json({ messages: [{ role: 'user', content: 'hi' }] })],
  ];

  for (const [name, path, init] of ROUTES) {
    test(`${name}: every wrong shape is a 502 upstream_invalid_response, never a 200 or a 500`, async () => {
      for (const body of BAD) {
        mock.inject({ format: 'openai', reply: { body } });
        const res = await fetch(`${gateway.url}${path}`, init());
        const text = await res.text();
        assert.equal(res.status, 502, `${name} with ${body}: ${res.status} ${text}`);
        assert.match(text, /invalid response|upstream_invalid_response/, `${name} with ${body}: ${text}`);
        assert.match(text, /openai/, 'the provider is named');
      }
      await healthy();
    });
  }

  test('models listing: a wrong shape from the provider asked for is a 502', async () => {
    for (const body of ['{"data":"nope"}', 'null', 'not json']) {
      mock.inject({ format: 'openai', reply: { body } });
      const res = await fetch(`${gateway.url}/v1/models?provider=openai`);
      assert.equal(res.status, 502, `${body}: ${res.status}`);
      assert.match(await res.text(), /upstream_invalid_response/);
    }
  });

  test('each provider format: a chat answer of the wrong shape is a 502 naming that provider', async () => {
    const cases: [string, string, string][] = [
      ['anthropic', 'anthropic/claude-sonnet-4-5', '{"type":"message","content":"nope"}'],
      ['gemini', 'gemini/gemini-2.5-flash', '{"candidates":"nope"}'],
      ['cohere', 'cohere/command-r-plus', '{"message":"nope"}'],
      ['bedrock', 'bedrock/anthropic.claude-3-haiku', '{"output":null}'],
      ['anthropic', 'anthropic/claude-sonnet-4-5', 'null'],
      ['gemini', 'gemini/gemini-2.5-flash', '[]'],
    ];
    for (const [format, model, body] of cases) {
      mock.inject({ format: format as 'openai', reply: { body } });
      const res = await post('/v1/chat/completions', chat(model));
      assert.equal(res.status, 502, `${model} ${body}: ${res.text}`);
      const err = JSON.parse(res.text) as { error: { type: string }; extra_fields: { provider: string } };
      assert.equal(err.error.type, 'upstream_invalid_response');
      assert.equal(err.extra_fields.provider, format);
    }
  });

  test('cohere rerank of the wrong shape is a 502', async () => {
    mock.inject({ format: 'cohere', reply: { body: '{"results":"nope"}' } });
    const res = await post('/v1/rerank', { model: 'cohere/rerank-v3.5', query: 'q', documents: ['a', 'b'] });
    assert.equal(res.status, 502, res.text);
    assert.match(res.text, /upstream_invalid_response/);
  });

  test('streams: a malformed first event is a 502; a malformed event mid-stream ends the stream with an in-band error', async () => {
    mock.inject({ format: 'openai', reply: { events: ['data: {"choices":"nope"}\n\n', 'data: [DONE]\n\n'] } });
    const first = await post('/v1/chat/completions', chat('openai/gpt-4o', { stream: true }));
    assert.equal(first.status, 502, first.text);
    assert.match(first.text, /upstream_invalid_response/);

    const good = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] })}\n\n`;
    for (const bad of ['data: nope\n\n', 'data: {"choices":"nope"}\n\n', 'data: null\n\n']) {
      for (const path of ['/v1/chat/completions', '/anthropic/v1/messages']) {
        mock.inject({ format: 'openai', reply: { events: [good, bad, good, 'data: [DONE]\n\n'] } });
        const res = await post(path, { ...chat('openai/gpt-4o', { stream: true }), max_tokens: 10 });
        assert.equal(res.status, 200, res.text);
        assert.match(res.text, /Hel/);
        assert.match(res.text, /invalid response/, `${path} ${bad}: ${res.text}`);
        // The stream ended at the error: the later good chunk was not relayed.
        assert.equal(res.text.split('Hel').length - 1, 1, res.text);
      }
    }
    await healthy();
  });
});

describe('size limits', () => {
  const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${gateway.process.pid}/status`, 'utf8'))![1]) * 1024;

  test('a 100 MB answer is a 502 naming the limit; a 100 MB stream event too; memory stays bounded', async () => {
    const baseline = peakRss();
    mock.inject({ format: 'openai', oversize: { bytes: 100 * 1024 * 1024 } });
    const res = await post('/v1/chat/completions', chat('openai/gpt-4o'));
    assert.equal(res.status, 502, res.text.slice(0, 300));
    const body = JSON.parse(res.text) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'upstream_response_too_large');
    assert.match(body.error.message, /67108864 bytes \(network_config\.max_response_body_size_mb\)/);

    mock.inject({ format: 'openai', oversize: { bytes: 100 * 1024 * 1024, stream: true } });
    const stream = await post('/v1/chat/completions', chat('openai/gpt-4o', { stream: true }));
    assert.equal(stream.status, 502, stream.text.slice(0, 300));
    assert.match(stream.text, /stream event larger than the limit of 8388608 bytes \(network_config\.max_stream_event_size_mb\)/);

    // The upstream connections were dropped: the mock saw its writes cut off well before the end.
    await eventually(() => assert.equal(mock.requests.filter((r) => r.aborted).length, 2, 'both oversized answers were cut off'));
    for (const r of mock.requests) assert.ok(!r.responseBody!.includes('104857600 of'), r.responseBody);
    // At most the 64 MiB answer limit (plus buffers) held on top of what the process needed before.
    const peak = peakRss();
    assert.ok(peak - baseline < 120 * 1024 * 1024, `gateway peak RSS grew ${Math.round((peak - baseline) / 1048576)} MB (from ${Math.round(baseline / 1048576)} MB)`);
    const ok = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'still up' }] });
    assert.equal(ok.choices[0].message.content, 'Mock reply to: still up');
  });
});

describe('null optional fields (OpenAI compatibility)', () => {
  const NULLS = {
    temperature: null, top_p: null, max_tokens: null, max_completion_tokens: null, stop: null, n: null, seed: null,
    tools: null, tool_choice: null, presence_penalty: null, frequency_penalty: null, logit_bias: null, logprobs: null,
    top_logprobs: null, response_format: null, user: null, stream_options: null, parallel_tool_calls: null,
    metadata: null, store: null, reasoning_effort: null, service_tier: null,
  };

  test('raw JSON chat with every optional field null: 200 on OpenAI and Anthropic, no null reaches Anthropic', async () => {
    for (const model of ['openai/gpt-4o', 'anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-flash']) {
      const res = await post('/v1/chat/completions', chat(model, NULLS));
      assert.equal(res.status, 200, `${model}: ${res.text}`);
      assert.match(res.text, /Mock reply to: hi/);
    }
    const sent = mock.requests.find((r) => r.format === 'anthropic')!.body as Record<string, unknown>;
    assert.ok(!Object.values(sent).includes(null), JSON.stringify(sent));
  });

  test('the official SDK with nulls: chat (streaming too), completions, embeddings, responses', async () => {
    const res = await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hey' }], temperature: null, max_tokens: null, stop: null, tools: undefined, seed: null, n: null });
    assert.equal(res.choices[0].message.content, 'Mock reply to: hey');
    const stream = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hey' }], stream: true, stream_options: null, temperature: null });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Mock reply to: hey');
    const text1 = await client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'hey', max_tokens: null, temperature: null, stop: null, suffix: null });
    assert.ok(text1.choices.length > 0);
    const emb = await client.embeddings.create({ model: 'gemini/text-embedding-004', input: 'hey', dimensions: null as unknown as undefined, user: null as unknown as undefined });
    assert.equal(emb.data.length, 1);
    const r = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hey', temperature: null, max_output_tokens: null, instructions: null, previous_response_id: null, reasoning: null, text: null as unknown as undefined, store: null, metadata: null });
    assert.equal(r.output_text, 'Mock reply to: hey');
  });

  test('a null required field is still a 400 naming it', async () => {
    const res = await post('/v1/chat/completions', { model: 'openai/gpt-4o', messages: null });
    assert.equal(res.status, 400);
    assert.match(res.text, /messages/);
  });
});

describe('stream fallback', () => {
  test('an upstream reset after the headers, before the first event, falls back to the next target', async () => {
    mock.inject({ format: 'openai', model: 'gpt-4o', resetAfterChunks: 0 });
    const res = await post('/v1/chat/completions', chat('openai/gpt-4o', { stream: true, fallbacks: ['backup/gpt-4o'] }));
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /"provider":"backup"/);
    assert.match(res.text, /data: \[DONE\]/);
    assert.doesNotMatch(res.text, /error/);
    assert.equal(mock.requests.filter((r) => r.format === 'openai').length, 2);
  });

  test('without a fallback the reset is a 502 status, not a 200 with an error event', async () => {
    mock.inject({ format: 'openai', model: 'gpt-4o', resetAfterChunks: 0 });
    const res = await post('/v1/chat/completions', chat('openai/gpt-4o', { stream: true }));
    assert.equal(res.status, 502, res.text);
    assert.match(res.text, /upstream_connection_error/);
  });
});

describe('provider headers', () => {
  test('anthropic-beta reaches Anthropic from the native prefix and from /v1, and only Anthropic', async () => {
    const native = await post('/anthropic/v1/messages', { model: 'anthropic/claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-beta': 'output-128k-2025-02-19' });
    assert.equal(native.status, 200, native.text);
    const unified = await post('/v1/chat/completions', chat('anthropic/claude-sonnet-4-5'), { 'anthropic-beta': 'token-efficient-tools-2025-02-19' });
    assert.equal(unified.status, 200, unified.text);
    const toOpenAI = await post('/v1/chat/completions', chat('openai/gpt-4o'), { 'anthropic-beta': 'token-efficient-tools-2025-02-19' });
    assert.equal(toOpenAI.status, 200);
    const seen = mock.requests.map((r) => [r.format, r.headers['anthropic-beta'], r.headers['anthropic-version']]);
    assert.deepEqual(seen, [
      ['anthropic', 'output-128k-2025-02-19', '2023-06-01'],
      ['anthropic', 'token-efficient-tools-2025-02-19', '2023-06-01'],
      ['openai', undefined, undefined],
    ]);
  });
});

describe('metrics labels', () => {
  test('made-up model names do not take label slots; real models keep theirs; odd names are escaped', async () => {
    // 220 names a provider refuses (the mock 404s `nonexistent*`), more than the label cap.
    for (let i = 0; i < 220; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => post('/v1/chat/completions', chat(`openai/nonexistent-${i + j}`))));
    }
    const weird = 'we"ird\\mo\ndel';
    assert.equal((await post('/v1/chat/completions', chat(`openai/${weird}`))).status, 200);
    assert.equal((await post('/v1/chat/completions', chat('openai/gpt-4o-mini'))).status, 200);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    assert.doesNotMatch(metrics, /nonexistent-/);
    assert.match(metrics, /skybridge_requests_total\{operation="chat",provider="openai",model="other",status="404"\} 220/);
    assert.match(metrics, /skybridge_requests_total\{operation="chat",provider="openai",model="gpt-4o-mini",status="200"\} 1/);
    assert.ok(metrics.includes('model="we\\"ird\\\\mo\\ndel"'), 'label value escaped');
    // Every exposition line is one sample or comment: the newline did not split a line.
    for (const line of metrics.split('\n')) if (line) assert.match(line, /^(#|skybridge_|process_|nodejs_)/, line);
  });
});

function json(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
