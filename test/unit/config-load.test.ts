import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configFromEnv, parseConfig } from '../../proxy/src/config/load.ts';
import { checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { keyId } from '../../proxy/src/schema/key-id.ts';

function errorsOf(raw: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    checkConfig(raw, 'test', env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.errors.map((e) => `${e.path}: ${e.message}`);
  }
  return [];
}

test('the reference gateway shape is accepted as it is', () => {
  const { config, warnings } = checkConfig(
    {
      $schema: 'https://example/config.schema.json',
      client: { compat: { convert_text_to_chat: true }, max_request_body_size_mb: 5 },
      providers: {
        openai: {
          keys: [{ name: 'main', value: 'env.OPENAI_KEY', models: ['gpt-4o'], weight: 0.7 }, { name: 'spare', value: 'sk-2', weight: 0.3 }],
          network_config: { base_url: 'https://proxy.example/openai/', extra_headers: { 'x-team': 'a' }, default_request_timeout_in_seconds: 10, max_retries: 3, retry_backoff_initial_ms: 100, retry_backoff_max_ms: 2000 },
          send_back_raw_response: true,
        },
        ollama: { keys: [], network_config: { base_url: 'http://localhost:11434' } },
      },
    },
    'test',
    { OPENAI_KEY: 'sk-1' },
  );
  assert.deepEqual(warnings, []);
  assert.equal(config.providers!.openai.keys![0].value, 'sk-1');
  const snap = compileSnapshot(config);
  const openai = snap.providers.get('openai')!;
  assert.equal(openai.origin, 'https://proxy.example');
  assert.equal(openai.basePath, '/openai/v1');
  assert.equal(openai.maxRetries, 3);
  assert.equal(openai.timeoutMs, 10_000);
  assert.deepEqual([...openai.keys[0].models!], ['gpt-4o']);
  assert.equal(openai.keys[1].models, null);
  assert.equal(openai.sendBackRawResponse, true);
  assert.equal(snap.convertTextToChat, true);
  assert.equal(snap.maxBodyBytes, 5 * 1024 * 1024);
  assert.equal(snap.providers.get('ollama')!.keyless, true);
});

test('every schema error is reported with its JSON path', () => {
  const errors = errorsOf({
    providers: { openai: { keys: [{ name: 'k', value: 'v', weight: -1, extra: 1 }], network_config: { base_url: 3 } } },
    client: { compat: { convert_text_to_chat: 'yes' } },
  });
  assert.ok(errors.includes('providers.openai.keys[0].weight: must be >= 0'), errors.join('\n'));
  assert.ok(errors.includes('providers.openai.keys[0].extra: unknown field'));
  assert.ok(errors.includes('providers.openai.network_config.base_url: must be string'));
  assert.ok(errors.includes('client.compat.convert_text_to_chat: must be boolean'));
});

test('semantic rules: keys required, custom providers need a base URL, backoff order, provider names', () => {
  const errors = errorsOf({
    providers: {
      anthropic: { keys: [] },
      mine: { keys: [{ name: 'k', value: 'v' }], custom_provider_config: { base_provider_type: 'openai' } },
      openai: { keys: [{ name: 'k', value: 'v' }], network_config: { base_url: 'ftp://x', retry_backoff_initial_ms: 500, retry_backoff_max_ms: 100 } },
      'Bad Name': { keys: [{ name: 'k', value: 'v' }] },
    },
  });
  assert.ok(errors.includes('providers.anthropic.keys: needs at least one key'), errors.join('\n'));
  assert.ok(errors.includes('providers.mine.network_config.base_url: is required for a custom provider (or network_config.inference_pool)'));
  assert.ok(errors.includes('providers.openai.network_config.base_url: must be an absolute http(s) URL'));
  assert.ok(errors.includes('providers.openai.network_config.retry_backoff_max_ms: must be >= retry_backoff_initial_ms'));
  assert.ok(errors.some((e) => e.startsWith('providers: ') || e.includes('Bad Name')), errors.join('\n'));
});

test('unbuilt features are accepted with a warning naming the field', () => {
  const { warnings } = checkConfig(
    {
      mcp: {},
      plugins: [{ name: 'maxim', enabled: true }, { name: 'logging', enabled: true, config: { disable_content_logging: true } }],
      client: { enable_logging: true, disable_content_logging: true, drop_excess_requests: true },
      providers: { openai: { keys: [{ name: 'k', value: 'v', use_for_batch_api: true }], proxy_config: { type: 'none' } } },
      governance: { auth_config: { disable_auth_on_inference: true } },
    },
    't',
    {},
  );
  assert.deepEqual(warnings.sort(), [
    "config field 'client.drop_excess_requests' is not supported yet and is ignored",
    "config field 'governance.auth_config.disable_auth_on_inference' is not supported yet and is ignored (inference auth follows client.enforce_auth_on_inference)",
    "config field 'providers.openai.keys[0].use_for_batch_api' is not supported yet and is ignored",
    "config field 'providers.openai.proxy_config' is not supported yet and is ignored",
    "plugin 'maxim' is not built into this gateway: its configuration is kept, but nothing runs",
  ]);
});

test('custom providers extend a base format and restrict operations', () => {
  const { config } = checkConfig(
    { providers: { corp: { keys: [{ name: 'k', value: 'v' }], network_config: { base_url: 'http://llm.corp:9000' }, custom_provider_config: { base_provider_type: 'anthropic', allowed_requests: { chat_completion: true, list_models: false } } } } },
    't',
    {},
  );
  const corp = compileSnapshot(config).providers.get('corp')!;
  assert.equal(corp.kind.format, 'anthropic');
  assert.equal(corp.basePath, '/v1');
  assert.ok(corp.operations.has('chat'));
  assert.ok(!corp.operations.has('models'));
});

test('invalid JSON text names the parse error', () => {
  assert.throws(() => parseConfig('{"a":', 'config.json'), /config\.json[\s\S]*not valid JSON/);
});

test('environment defaults: one provider per key variable, base URL override', () => {
  const config = configFromEnv({ OPENAI_API_KEY: 'sk-o', GEMINI_API_KEY: 'g', GEMINI_BASE_URL: 'http://127.0.0.1:1/gemini', VLLM_BASE_URL: 'http://127.0.0.1:8000' });
  assert.deepEqual(Object.keys(config.providers!).sort(), ['gemini', 'openai', 'vllm']);
  assert.equal(config.providers!.gemini.network_config?.base_url, 'http://127.0.0.1:1/gemini');
  assert.deepEqual(config.providers!.vllm.keys, []);
});

test('key ids are stable UUID-shaped values', () => {
  assert.equal(keyId('openai', 'main'), keyId('openai', 'main'));
  assert.notEqual(keyId('openai', 'main'), keyId('openai', 'spare'));
  assert.match(keyId('openai', 'main'), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('governance references are checked with their JSON paths', () => {
  const providers = { openai: { keys: [{ name: 'k', value: 'v' }] } };
  assert.throws(
    () =>
      checkConfig(
        {
          providers,
          governance: {
            budgets: [{ id: 'b', max_limit: 1, reset_duration: '1d' }],
            rate_limits: [{ id: 'r', request_max_limit: 5 }],
            teams: [{ id: 't', name: 'T', customer_id: 'nope' }],
            virtual_keys: [
              { id: 'v1', name: 'one', value: 'sk-bf-aaaaaaaa', team_id: 'ghost', budget_id: 'b', provider_configs: [{ provider: 'mistral', key_ids: ['k'] }] },
              { id: 'v2', name: 'one', value: 'sk-bf-aaaaaaaa', rate_limit_id: 'missing' },
            ],
          },
        },
        't',
        {},
      ),
    (e: unknown) => {
      const paths = (e as ConfigError).errors.map((x) => `${x.path}: ${x.message}`);
      assert.deepEqual(paths.sort(), [
        'governance.rate_limits[0].request_reset_duration: is required with request_max_limit',
        "governance.teams[0].customer_id: no customer with id 'nope'",
        "governance.virtual_keys[0].provider_configs[0].key_ids[0]: 'k' is neither a key id nor the name of a key of provider 'mistral'",
        "governance.virtual_keys[0].provider_configs[0].provider: provider 'mistral' is not configured",
        "governance.virtual_keys[0].team_id: no team with id 'ghost'",
        "governance.virtual_keys[1].name: duplicate name 'one'",
        "governance.virtual_keys[1].rate_limit_id: no rate limit with id 'missing'",
        'governance.virtual_keys[1].value: duplicate virtual key value',
      ]);
      return true;
    },
  );
});
