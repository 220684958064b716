// PUT /api/config and GET /api/config/settings against a real gateway (child process, config.json
// in an app dir) with the official OpenAI SDK as the inference client: a change applies to the next
// request, a bad value is a 400 naming the field, a setting of config.json is the file's (409), one
// of a feature not built is refused, and a change survives a restart and an edit of config.json.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { mockProviders } from '../helpers/providers.ts';
import { eventually } from '../helpers/patience.ts';
import type { ClientSettingsAnswer, ClientSettingView } from '../../proxy/src/api/answers.ts';

const T = { timeout: 120_000 };

describe('client settings through /api/config', () => {
  let mock: MockProvider;
  let gw: RunningGateway;
  let api: Api;
  let sdk: OpenAI;
  const seed = (url: string, extra: Record<string, unknown> = {}) => ({ providers: mockProviders(url), client: { allowed_origins: ['https://a.example'] }, ...extra });

  const setting = async (name: string): Promise<ClientSettingView> => {
    const r = await api<ClientSettingsAnswer>('GET', '/api/config/settings');
    assert.equal(r.status, 200, r.text);
    const s = r.body.settings.find((x) => x.name === name);
    assert.ok(s, `${name} is listed`);
    return s;
  };
  const restart = async (config?: unknown) => {
    const appDir = gw.appDir;
    await gw.stop();
    gw = await startGateway(config, { appDir });
    api = apiClient(gw);
    sdk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  };

  before(async () => {
    mock = await startMockProvider();
    gw = await startGateway(seed(mock.url));
    api = apiClient(gw);
    sdk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  test('the settings list each setting with its default, value, owner and what it opens', T, async () => {
    const r = await api<ClientSettingsAnswer>('GET', '/api/config/settings');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.read_only, false);
    assert.equal(r.body.persistent, true, 'an --app-dir keeps the configuration store');
    const logging = r.body.settings.find((s) => s.name === 'enable_logging')!;
    assert.deepEqual([logging.type, logging.default, logging.value, logging.owner], ['boolean', true, undefined, 'default']);
    assert.match(logging.effect, /content/);
    const origins = r.body.settings.find((s) => s.name === 'allowed_origins')!;
    assert.deepEqual(origins.value, ['https://a.example']);
    assert.equal(origins.owner, 'file');
    assert.match(origins.source ?? '', /config\.json$/);
    const body = r.body.settings.find((s) => s.name === 'max_request_body_size_mb')!;
    assert.deepEqual([body.type, body.default, body.minimum], ['integer', 10, 1]);
    assert.ok(r.body.settings.some((s) => s.name === 'async_job_config.max_attempts'), 'nested settings are listed by their path');
    // Settings of features not built are not offered.
    assert.ok(!r.body.settings.some((s) => s.name === 'drop_excess_requests'));
  });

  test('bad input is a 400 naming the field; config.json settings are the file’s; unbuilt ones are refused', T, async () => {
    const bad = await api<ApiError>('PUT', '/api/config', { client_config: { max_request_body_size_mb: 0 } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.param, 'client_config.max_request_body_size_mb');
    assert.match(bad.body.error.message, /max_request_body_size_mb: must be >= 1/);
    const origin = await api<ApiError>('PUT', '/api/config', { client_config: { allowed_origins: ['not a url'] } });
    assert.equal(origin.status, 409, 'allowed_origins is set in config.json');
    assert.equal(origin.body.error.param, 'client_config.allowed_origins');
    assert.match(origin.body.error.message, /config\.json/);
    // Sent back unchanged (a client writing the whole section back), it is accepted.
    assert.equal((await api('PUT', '/api/config', { client_config: { allowed_origins: ['https://a.example'] } })).status, 200);
    const unbuilt = await api<ApiError>('PUT', '/api/config', { client_config: { drop_excess_requests: true } });
    assert.equal(unbuilt.status, 400);
    assert.equal(unbuilt.body.error.param, 'client_config.drop_excess_requests');
    assert.match(unbuilt.body.error.message, /not built/);
    const auth = await api<ApiError>('PUT', '/api/config', { auth_config: { admin_password: 'x' } });
    assert.equal(auth.status, 400);
    assert.equal(auth.body.error.param, 'auth_config');
    const notObject = await api<ApiError>('PUT', '/api/config', { client_config: [] });
    assert.equal(notObject.status, 400);
    assert.equal(notObject.body.error.param, 'client_config');
    const typo = await api<ApiError>('PUT', '/api/config', { client_config: { enable_loging: false } });
    assert.equal(typo.status, 400);
    assert.match(typo.body.error.param ?? '', /enable_loging/);
  });

  test('a change applies to the next request: the body limit and logging', T, async () => {
    const big = 'x'.repeat(1_500_000);
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: big }] });
    const set = await api<{ client_config: Record<string, unknown> }>('PUT', '/api/config', { client_config: { max_request_body_size_mb: 1 } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.client_config.max_request_body_size_mb, 1);
    await assert.rejects(sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: big }] }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 413);
    assert.equal((await setting('max_request_body_size_mb')).owner, 'store');

    // Logging off: the next request leaves no record; back on, the one after it is logged. The
    // writer keeps order, so once the later record is stored the earlier one would be too.
    const found = async (marker: string) => (await api<{ logs: unknown[] }>('GET', `/api/logs?content_search=${marker}`)).body.logs.length;
    assert.equal((await api('PUT', '/api/config', { client_config: { enable_logging: false } })).status, 200);
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'marker-off-7731' }] });
    assert.equal((await api('PUT', '/api/config', { client_config: { enable_logging: null } })).status, 200);
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'marker-on-7731' }] });
    await eventually(async () => assert.equal(await found('marker-on-7731'), 1));
    assert.equal(await found('marker-off-7731'), 0);
  });

  test('a change survives a restart and an edit of config.json; null puts the default back', T, async () => {
    assert.equal((await api('PUT', '/api/config', { client_config: { async_job_config: { max_attempts: 7 }, logging_headers: ['x-tenant'] } })).status, 200);
    await restart();
    assert.equal((await setting('max_request_body_size_mb')).value, 1);
    assert.equal((await setting('async_job_config.max_attempts')).value, 7);
    // A nested member is merged, not replaced.
    assert.equal((await api('PUT', '/api/config', { client_config: { async_job_config: { lease_seconds: 9 } } })).status, 200);
    assert.equal((await setting('async_job_config.max_attempts')).value, 7);
    // config.json edited (another provider setting): the settings made here stay.
    await restart(seed(mock.url, { client: { allowed_origins: ['https://a.example'], disable_content_logging: true } }));
    assert.equal((await setting('max_request_body_size_mb')).value, 1);
    assert.deepEqual((await setting('logging_headers')).value, ['x-tenant']);
    const content = await setting('disable_content_logging');
    assert.deepEqual([content.value, content.owner], [true, 'file']);
    assert.equal((await api('PUT', '/api/config', { client_config: { max_request_body_size_mb: null } })).status, 200);
    const body = await setting('max_request_body_size_mb');
    assert.deepEqual([body.value, body.owner], [undefined, 'default']);
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(1_500_000) }] });
  });
});
