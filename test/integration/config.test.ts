// config.json: validation at start-up with every error's path, live reload, embedded defaults,
// request size limits and the /metrics, /health surfaces.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { runGatewayExpectingExit, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { mockProviders } from '../helpers/providers.ts';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups) await c();
});

async function gatewayWith(config: unknown, env?: NodeJS.ProcessEnv): Promise<{ gw: RunningGateway; mock: MockProvider; client: OpenAI }> {
  const mock = await startMockProvider();
  const gw = await startGateway(typeof config === 'function' ? (config as (u: string) => unknown)(mock.url) : config, { env });
  cleanups.push(async () => {
    await gw.stop();
    await mock.close();
  });
  return { gw, mock, client: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 }) };
}

describe('start-up validation', () => {
  test('an invalid config.json stops start-up listing every error with its path', async () => {
    const { code, output } = await runGatewayExpectingExit({
      providers: {
        openai: { keys: [{ name: 'a', value: 'sk', weight: -1 }, { name: 'a', value: 'sk2' }], network_config: { max_retries: 'three' } },
        madeup: { keys: [{ name: 'k', value: 'v' }] },
      },
      client: { unknown_field: true },
    });
    assert.equal(code, 1);
    assert.match(output, /providers\.openai\.keys\[0\]\.weight: must be >= 0/);
    assert.match(output, /providers\.openai\.network_config\.max_retries: must be integer/);
    assert.match(output, /client\.unknown_field: unknown field/);
  });

  test('semantic errors too: duplicate key names, unknown providers, missing env vars', async () => {
    const { code, output } = await runGatewayExpectingExit({
      providers: {
        openai: { keys: [{ name: 'a', value: 'env.SKYBRIDGE_TEST_MISSING' }, { name: 'a', value: 'sk2' }] },
        madeup: { keys: [{ name: 'k', value: 'v' }] },
      },
    });
    assert.equal(code, 1);
    assert.match(output, /providers\.openai\.keys\[1\]\.name: duplicate key name 'a'/);
    assert.match(output, /providers\.madeup: unknown provider 'madeup'/);
    assert.match(output, /providers\.openai\.keys\[0\]\.value: environment variable SKYBRIDGE_TEST_MISSING is not set/);
  });

  test('a file that is not JSON is refused with the parse error', async () => {
    const { code, output } = await runGatewayExpectingExit('{ "providers": ');
    assert.equal(code, 1);
    assert.match(output, /not valid JSON/);
  });

  test('fields of features not built yet start with a warning naming them', async () => {
    const { gw } = await gatewayWith((u: string) => ({ providers: mockProviders(u), mcp: {}, client: { enable_logging: true, drop_excess_requests: true } }));
    // MCP is built: its section is not warned about.
    assert.doesNotMatch(gw.logs(), /config field 'mcp'/);
    assert.match(gw.logs(), /config field 'client.drop_excess_requests' is not supported yet/);
    // Request logging is built: switching it on is not warned about.
    assert.doesNotMatch(gw.logs(), /enable_logging/);
  });
});

describe('env references and environment defaults', () => {
  test('env.VAR key values are read from the environment and sent upstream', async () => {
    const { client, mock } = await gatewayWith(
      (u: string) => ({ providers: { openai: { keys: [{ name: 'k', value: 'env.MY_OPENAI_KEY', weight: 1 }], network_config: { base_url: `${u}/openai` } } } }),
      { MY_OPENAI_KEY: 'sk-from-env' },
    );
    await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-from-env');
  });

  test('without config.json providers come from OPENAI_API_KEY / OPENAI_BASE_URL; a bare model works with one provider', async () => {
    const mock = await startMockProvider();
    const gw = await startGateway(undefined, { env: { OPENAI_API_KEY: 'sk-env-default', OPENAI_BASE_URL: `${mock.url}/openai` } });
    cleanups.push(async () => {
      await gw.stop();
      await mock.close();
    });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const res = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'defaults' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: defaults');
    assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-env-default');
  });
});

describe('live reload', () => {
  test('a valid edit applies without restart; an invalid edit keeps the last good config', async () => {
    const { gw, client, mock } = await gatewayWith((u: string) => ({ providers: mockProviders(u) }));
    const text = () => client.completions.create({ model: 'anthropic/claude-sonnet-4-5', prompt: 'emulate me' });
    await assert.rejects(text(), /not supported by provider 'anthropic'/);
    const loaded = async () => {
      const m = await (await fetch(`${gw.url}/metrics`)).text();
      return { at: Number(/^skybridge_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(m)?.[1]), revision: /^skybridge_config_revision_info\{revision="([^"]+)"\} 1$/m.exec(m)?.[1] };
    };
    const first = await loaded();
    assert.ok(first.at > 0 && first.at <= Date.now() / 1000, String(first.at));

    gw.writeConfig({ providers: mockProviders(mock.url), client: { compat: { convert_text_to_chat: true } } });
    await eventually(async () => {
      const res = await text();
      assert.equal(res.object, 'text_completion');
      assert.equal(res.choices[0].text, 'Mock reply to: emulate me');
    });
    // The reload moved the served revision and its timestamp.
    const second = await loaded();
    assert.ok(second.at > first.at, `${second.at} > ${first.at}`);
    assert.notEqual(second.revision, first.revision);

    gw.writeConfig({ providers: { openai: { keys: [{ name: 'k', value: 'v', weight: 'heavy' }] } } });
    await eventually(() => assert.match(gw.logs(), /reload rejected/));
    const still = await text();
    assert.equal(still.choices[0].text, 'Mock reply to: emulate me');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /skybridge_config_reload_errors_total 1/);
    assert.deepEqual(await loaded(), second, 'a rejected update is not a successful load');
  });

  test("a reloaded key's new value and extra headers are what the provider receives; no other provider gets them", async () => {
    const { gw, client, mock } = await gatewayWith((u: string) => ({ providers: mockProviders(u, { openai: { network_config: { base_url: `${u}/openai`, extra_headers: { 'x-team': 'first' } } } }) }));
    const chat = (model: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'which key' }] });
    await chat('openai/gpt-4o');
    assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-openai-test');
    assert.equal(mock.requests.at(-1)!.headers['x-team'], 'first');

    // The same key (its name, so its id) with a new value: the upstream headers made for the old one are not reused.
    const rotated = mockProviders(mock.url, {
      openai: { keys: [{ name: 'openai-key', value: 'sk-openai-rotated', weight: 1 }], network_config: { base_url: `${mock.url}/openai`, extra_headers: { 'x-team': 'second' } } },
    });
    gw.writeConfig({ providers: rotated });
    await eventually(async () => {
      await chat('openai/gpt-4o');
      assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-openai-rotated');
    });
    const from = mock.requests.length;
    await chat('openai/gpt-4o');
    await chat('anthropic/claude-sonnet-4-5');
    await chat('openai/gpt-4o');
    const after = mock.requests.slice(from);
    assert.deepEqual(
      after.map((r) => [r.headers.authorization, r.headers['x-api-key'], r.headers['x-team']]),
      [
        ['Bearer sk-openai-rotated', undefined, 'second'],
        [undefined, 'sk-anthropic-test', undefined],
        ['Bearer sk-openai-rotated', undefined, 'second'],
      ],
    );
  });
});

describe('limits and surfaces', () => {
  test('a body over max_request_body_size_mb is refused with 413', async () => {
    const { gw } = await gatewayWith((u: string) => ({ providers: mockProviders(u), client: { max_request_body_size_mb: 1 } }));
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(1_200_000) }] }),
    });
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'request_too_large');
  });

  test('/health and /metrics', async () => {
    const { gw, client } = await gatewayWith((u: string) => ({ providers: mockProviders(u) }));
    const health = (await (await fetch(`${gw.url}/health`)).json()) as { status: string; config_hash: string };
    assert.equal(health.status, 'ok');
    await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'count me' }] });
    const stream = await client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages: [{ role: 'user', content: 'stream me' }], stream: true });
    for await (const _ of stream) void _;
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(text, /skybridge_requests_total\{operation="chat",provider="openai",model="gpt-4o",status="200"\} 1/);
    assert.match(text, /skybridge_tokens_total\{provider="openai",model="gpt-4o",direction="input"\} [1-9]/);
    assert.match(text, /skybridge_tokens_total\{provider="gemini",model="gemini-2.5-flash",direction="output"\} [1-9]/);
    assert.match(text, /skybridge_stream_first_token_seconds_count\{provider="gemini",model="gemini-2.5-flash"\} 1/);
    assert.match(text, /skybridge_upstream_duration_seconds_count\{provider="openai",model="gpt-4o",status="200"\} 1/);
    assert.match(text, new RegExp(`skybridge_config_info\\{config_hash="${health.config_hash}"\\} 1`));
    // Outside Kubernetes the served revision is the config hash; loaded at start.
    assert.match(text, new RegExp(`^skybridge_config_revision_info\\{revision="${health.config_hash}"\\} 1$`, 'm'));
    const loadedAt = Number(/^skybridge_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(text)?.[1]);
    assert.ok(loadedAt > Date.now() / 1000 - 120 && loadedAt <= Date.now() / 1000, String(loadedAt));
    // The process's own metrics under their standard names.
    assert.match(text, /^process_cpu_seconds_total \d/m);
    assert.match(text, /^nodejs_heap_size_used_bytes \d/m);
    assert.doesNotMatch(text, /process_process_/);
  });
});

describe('cluster workers', () => {
  test('--workers 2 starts two workers on one port that both serve', async () => {
    const mock = await startMockProvider();
    const gw = await startGateway({ providers: mockProviders(mock.url) }, { args: ['--workers', '2'] });
    cleanups.push(async () => {
      await gw.stop();
      await mock.close();
    });
    await eventually(() => assert.equal(gw.logs().match(/skybridge listening/g)?.length, 2), 10_000);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: `n${i}` }] })),
    );
    answers.forEach((a, i) => assert.equal(a.choices[0].message.content, `Mock reply to: n${i}`));
  });
});
