// Azure OpenAI request shaping: deployment paths and api-version, per-key resources, auth headers,
// the Responses body's deployment, the stream's content-filter chunks, and the key config rules.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { azureOperationPath, deploymentFor, deploymentOp, formFor, modelBodyFor } from '../../proxy/src/providers/azure/paths.ts';
import { foundryOrigin } from '../../proxy/src/providers/azure/ocr.ts';
import { AZURE_DEFAULT_API_VERSION, azureConfigErrors, compileAzureKey } from '../../proxy/src/providers/azure/key.ts';
import { azureAuthHeaders, signAzure } from '../../proxy/src/providers/azure/sign.ts';
import { createAzureStreamTranslator } from '../../proxy/src/providers/azure/stream.ts';
import { azureAdapter } from '../../proxy/src/providers/azure/adapter.ts';
import type { ProviderKey } from '../../proxy/src/providers/runtime.ts';
import type { AzureKeyConfig } from '../../proxy/src/schema/gateway.ts';

const key = (value: string, cfg?: AzureKeyConfig): ProviderKey => ({
  id: 'k',
  name: 'k',
  value,
  models: null,
  weight: 1,
  ...(cfg ? { azure: compileAzureKey(cfg) } : {}),
});

describe('azure paths', () => {
  test('deployment operations get the deployment for the model and the api-version', () => {
    const op = deploymentOp('gpt-4o', '/chat/completions');
    assert.equal(op, '/deployments/gpt-4o/chat/completions');
    assert.equal(azureOperationPath(op, {}, '2024-10-21'), '/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
    assert.equal(azureOperationPath(op, { 'gpt-4o': 'prod chat' }, '2024-10-21'), '/deployments/prod%20chat/chat/completions?api-version=2024-10-21');
    assert.equal(
      azureOperationPath(deploymentOp('ada/v2', '/embeddings'), {}, '2025-04-01-preview'),
      '/deployments/ada%2Fv2/embeddings?api-version=2025-04-01-preview',
    );
  });

  test('responses go to the v1 API without api-version; models list keeps it', () => {
    assert.equal(azureOperationPath('/responses', {}, '2024-10-21'), '/v1/responses');
    assert.equal(azureOperationPath('/models', {}, '2024-10-21'), '/models?api-version=2024-10-21');
  });

  test('containers go to the v1 API, query kept, without api-version or deployment', () => {
    assert.equal(azureOperationPath('/containers', {}, '2024-10-21'), '/v1/containers');
    assert.equal(azureOperationPath('/containers?limit=2&after=cntr_1', {}, '2024-10-21'), '/v1/containers?limit=2&after=cntr_1');
    assert.equal(azureOperationPath('/containers/cntr_1/files/cfile_2/content', {}, '2024-10-21'), '/v1/containers/cntr_1/files/cfile_2/content');
    // Not a container path: a name that merely starts with it keeps the dated API.
    assert.equal(azureOperationPath('/containersx', {}, '2024-10-21'), '/containersx?api-version=2024-10-21');
  });

  test("Sora 2's videos go to the v1 API, query kept, without api-version", () => {
    assert.equal(azureOperationPath('/videos', {}, '2024-10-21'), '/v1/videos');
    assert.equal(azureOperationPath('/videos/video_1/content?variant=thumbnail', {}, '2024-10-21'), '/v1/videos/video_1/content?variant=thumbnail');
    assert.equal(azureOperationPath('/videos/video_1/remix', {}, '2024-10-21'), '/v1/videos/video_1/remix');
  });

  test('a form is rewritten only when the key maps its model part', () => {
    const form = [{ name: 'model', value: 'sora-2' }, { name: 'prompt', value: 'a fox' }];
    assert.equal(formFor(form, {}), undefined);
    assert.equal(formFor(form, { 'sora-2-pro': 'x' }), undefined);
    assert.equal(formFor(undefined, { 'sora-2': 'x' }), undefined);
    assert.deepEqual(formFor(form, { 'sora-2': 'video-prod' }), [{ name: 'model', value: 'video-prod' }, { name: 'prompt', value: 'a fox' }]);
  });

  test("Foundry's host of an Azure OpenAI endpoint; any other origin as configured", () => {
    assert.equal(foundryOrigin('https://acme.openai.azure.com'), 'https://acme.services.ai.azure.com');
    assert.equal(foundryOrigin('https://acme.services.ai.azure.com'), 'https://acme.services.ai.azure.com');
    assert.equal(foundryOrigin('https://acme.cognitiveservices.azure.com'), 'https://acme.cognitiveservices.azure.com');
    assert.equal(foundryOrigin('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
  });

  test('an unmapped model is its own deployment, inherited object keys included', () => {
    assert.equal(deploymentFor('gpt-4o', { 'gpt-4o': 'chat-prod' }), 'chat-prod');
    assert.equal(deploymentFor('o3', { 'gpt-4o': 'chat-prod' }), 'o3');
    assert.equal(deploymentFor('constructor', {}), 'constructor');
  });

  test('the Responses body is rewritten only when the key maps its model', () => {
    const body = JSON.stringify({ model: 'gpt-4o', input: 'hi' });
    assert.equal(modelBodyFor(body, {}), undefined);
    assert.equal(modelBodyFor(body, { other: 'x' }), undefined);
    assert.deepEqual(JSON.parse(modelBodyFor(body, { 'gpt-4o': 'chat-prod' })!), { model: 'chat-prod', input: 'hi' });
  });
});

describe('azure keys and signing', () => {
  test('compiled key: origin, path below the endpoint, default api-version, auth type', () => {
    const k = compileAzureKey({ endpoint: 'https://res.openai.azure.com/' });
    assert.deepEqual(k, { origin: 'https://res.openai.azure.com', basePath: '/openai', deployments: {}, apiVersion: AZURE_DEFAULT_API_VERSION, bearer: false });
    assert.equal(AZURE_DEFAULT_API_VERSION, '2024-10-21');
    const apim = compileAzureKey({ endpoint: 'https://apim.example.com/team-a/', api_version: '2025-04-01-preview', auth_type: 'bearer' });
    assert.equal(apim.basePath, '/team-a/openai');
    assert.equal(apim.apiVersion, '2025-04-01-preview');
    assert.equal(apim.bearer, true);
  });

  test('api-key by default, bearer when configured, no value is an error', () => {
    assert.deepEqual(azureAuthHeaders(key('k1')), { 'api-key': 'k1' });
    assert.deepEqual(azureAuthHeaders(key('tok', { endpoint: 'https://r.openai.azure.com', auth_type: 'bearer' })), { authorization: 'Bearer tok' });
    assert.throws(() => azureAuthHeaders(key('')), /has no value/);
  });

  test('a key with its own endpoint moves origin and path; auth headers are replaced', async () => {
    const signed = await signAzure(
      {
        method: 'POST',
        origin: 'https://first.openai.azure.com',
        basePath: '/openai',
        path: '/openai/deployments/gpt-4o/chat/completions',
        headers: { 'api-key': 'stale', 'x-team': 'search', 'content-type': 'application/json' },
        body: '{}',
      },
      key('tok', { endpoint: 'https://second.openai.azure.com/proxy', deployments: { 'gpt-4o': 'eu-chat' }, api_version: '2025-01-01-preview', auth_type: 'bearer' }),
    );
    assert.equal(signed.origin, 'https://second.openai.azure.com');
    assert.equal(signed.path, '/proxy/openai/deployments/eu-chat/chat/completions?api-version=2025-01-01-preview');
    assert.deepEqual(signed.headers, { 'x-team': 'search', 'content-type': 'application/json', authorization: 'Bearer tok' });
    assert.equal(signed.body, undefined);
  });

  test('a key without azure_key_config uses the provider endpoint and the default api-version', async () => {
    const signed = await signAzure(
      { method: 'GET', origin: 'https://r.openai.azure.com', basePath: '/openai', path: '/openai/models', headers: {}, body: undefined },
      key('plain'),
    );
    assert.equal(signed.origin, undefined);
    assert.equal(signed.path, '/openai/models?api-version=2024-10-21');
    assert.deepEqual(signed.headers, { 'api-key': 'plain' });
  });

  test('responses: the body carries the mapped deployment; a path override is left alone', async () => {
    const k = key('k', { endpoint: 'https://r.openai.azure.com', deployments: { 'gpt-4o': 'chat-prod' } });
    const signed = await signAzure({ method: 'POST', origin: 'https://r.openai.azure.com', basePath: '/openai', path: '/openai/responses', headers: {}, body: '{"model":"gpt-4o","input":"x"}' }, k);
    assert.equal(signed.path, '/openai/v1/responses');
    assert.equal(signed.body, '{"model":"chat-prod","input":"x"}');
    const custom = await signAzure({ method: 'POST', origin: 'https://r.openai.azure.com', basePath: '/openai', path: '/custom/chat', headers: {}, body: '{}' }, k);
    assert.equal(custom.path, '/custom/chat');
  });

  test("Foundry OCR: the resource root on its Foundry host, a bearer key, the body's deployment", async () => {
    const k = key('secret', { endpoint: 'https://acme.openai.azure.com/', deployments: { 'mistral-document-ai-2505': 'docs-ai' } });
    const signed = await signAzure(
      { method: 'POST', origin: 'https://acme.openai.azure.com', basePath: '/openai', path: '/openai/providers/mistral/azure/ocr', headers: { 'api-key': 'secret' }, body: '{"model":"mistral-document-ai-2505"}' },
      k,
    );
    assert.equal(signed.origin, 'https://acme.services.ai.azure.com');
    assert.equal(signed.path, '/providers/mistral/azure/ocr');
    assert.deepEqual(signed.headers, { authorization: 'Bearer secret' });
    assert.equal(signed.body, '{"model":"docs-ai"}');
  });

  test('a video create form gets the mapped deployment, re-encoded with its own boundary', async () => {
    const k = key('k', { endpoint: 'https://r.openai.azure.com', deployments: { 'sora-2': 'video-prod' } });
    const form = [{ name: 'model', value: 'sora-2' }, { name: 'prompt', value: 'a fox' }];
    const signed = await signAzure({ method: 'POST', origin: 'https://r.openai.azure.com', basePath: '/openai', path: '/openai/videos', headers: { 'content-type': 'multipart/form-data; boundary=old' }, body: undefined, form }, k);
    assert.equal(signed.path, '/openai/v1/videos');
    const type = signed.headers['content-type'];
    assert.match(type, /^multipart\/form-data; boundary=/);
    assert.equal(type, signed.payload?.contentType);
    assert.match(signed.payload!.bytes.toString(), /name="model"\r\n\r\nvideo-prod\r\n/);
  });

  test('the adapter names each operation by deployment path', () => {
    const chat = azureAdapter.chatRequest({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, 'gpt-4o', true);
    assert.equal(chat.path, '/deployments/gpt-4o/chat/completions');
    assert.deepEqual((chat.body as { stream_options: unknown }).stream_options, { include_usage: true });
    assert.equal(azureAdapter.textRequest!({ model: 'm', prompt: 'p' }, 'gpt-35-turbo-instruct', false).path, '/deployments/gpt-35-turbo-instruct/completions');
    assert.equal(azureAdapter.embeddingsRequest!({ model: 'm', input: 'x' }, 'text-embedding-3-small').path, '/deployments/text-embedding-3-small/embeddings');
    assert.equal(azureAdapter.modelsRequest(undefined).path, '/models');
  });
});

describe('azure stream', () => {
  test('filter-only chunks are dropped, a missing delta becomes empty, usage and text chunks pass', () => {
    const t = createAzureStreamTranslator();
    const ev = (v: unknown) => ({ data: JSON.stringify(v) });
    assert.deepEqual(t.push(ev({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0 }] })), []);
    const [c] = t.push(ev({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, finish_reason: null, content_filter_results: {} }] }));
    assert.deepEqual(c.choices[0].delta, {});
    const [u] = t.push(ev({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }));
    assert.equal(u.usage?.total_tokens, 3);
    const [text] = t.push(ev({ id: 't', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: 'hi', finish_reason: null }] }));
    assert.equal((text.choices[0] as unknown as { delta?: unknown }).delta, undefined);
    assert.deepEqual(t.push({ data: '[DONE]' }), []);
  });
});

describe('azure config rules', () => {
  test('every key needs an endpoint unless base_url gives one; endpoints must be URLs', () => {
    assert.deepEqual(azureConfigErrors('providers.azure', { keys: [{ name: 'a', value: 'v', azure_key_config: { endpoint: 'https://r.openai.azure.com' } }] }), []);
    assert.deepEqual(azureConfigErrors('providers.azure', { keys: [{ name: 'a', value: 'v' }], network_config: { base_url: 'https://r.openai.azure.com' } }), []);
    const errs = azureConfigErrors('providers.azure', { keys: [{ name: 'a', value: 'v' }, { name: 'b', value: 'v', azure_key_config: { endpoint: 'my-resource' } }] });
    assert.deepEqual(errs.map((e) => e.path), ['providers.azure.keys[0].azure_key_config', 'providers.azure.keys[1].azure_key_config.endpoint']);
  });
});

describe('azure in config.json and the environment', () => {
  test('azure_key_config is validated with the rest of the file', async () => {
    const { checkConfig, ConfigError } = await import('../../proxy/src/config/check.ts');
    const ok = checkConfig(
      { providers: { azure: { keys: [{ name: 'a', value: 'env.AZ_KEY', azure_key_config: { endpoint: 'env.AZ_ENDPOINT', deployments: { 'gpt-4o': 'prod' } } }] } } },
      't',
      { AZ_KEY: 'secret', AZ_ENDPOINT: 'https://r.openai.azure.com' },
    );
    assert.equal(ok.config.providers!.azure.keys![0].azure_key_config!.endpoint, 'https://r.openai.azure.com');
    const bad = (() => {
      try {
        checkConfig({ providers: { azure: { keys: [{ name: 'a', value: 'v', azure_key_config: { endpoint: 'https://r.openai.azure.com', auth_type: 'token', region: 'x' } }, { name: 'b', value: 'v' }] } } }, 't', {});
      } catch (e) {
        return e;
      }
    })();
    assert.ok(bad instanceof ConfigError);
    const paths = bad.errors.map((e) => e.path).join(' ');
    assert.match(paths, /providers\.azure\.keys\[0\]\.azure_key_config/);
    const missing = (() => {
      try {
        checkConfig({ providers: { azure: { keys: [{ name: 'b', value: 'v' }] } } }, 't', {});
      } catch (e) {
        return e;
      }
    })();
    assert.ok(missing instanceof ConfigError);
    assert.deepEqual(missing.errors.map((e) => e.path), ['providers.azure.keys[0].azure_key_config']);
  });

  test('from the environment: AZURE_OPENAI_API_KEY with AZURE_OPENAI_ENDPOINT, nothing without an endpoint', async () => {
    const { configFromEnv } = await import('../../proxy/src/config/load.ts');
    assert.deepEqual(configFromEnv({ AZURE_OPENAI_API_KEY: 'k', AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com' }).providers!.azure, {
      keys: [{ name: 'azure-env', value: 'k', models: [], weight: 1 }],
      network_config: { base_url: 'https://r.openai.azure.com' },
    });
    assert.equal(configFromEnv({ AZURE_OPENAI_API_KEY: 'k' }).providers!.azure, undefined);
  });
});
