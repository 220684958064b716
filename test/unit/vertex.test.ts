// Vertex AI provider pieces: paths per publisher and key, the Claude body tweaks, embeddings and
// errors, service-account parsing, the signed JWT (verified here with node:crypto), and the token
// cache against the mock's real token endpoint with a clock the test moves.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import type { ChatRequest } from '../../proxy/src/unified/chat.ts';
import type { ProviderKey } from '../../proxy/src/config/snapshot.ts';
import type { VertexKeyConfig } from '../../proxy/src/schema/gateway.ts';
import { publisherFor, scopedPath, vertexOrigin } from '../../proxy/src/providers/vertex/paths.ts';
import { toVertexClaudeRequest, vertexAdapter } from '../../proxy/src/providers/vertex/adapter.ts';
import { fromVertexEmbedResponse, toVertexEmbedRequest } from '../../proxy/src/providers/vertex/embeddings.ts';
import { serviceAccount } from '../../proxy/src/providers/vertex/credentials.ts';
import { CLOUD_PLATFORM_SCOPE, jwtAssertion, TokenCache } from '../../proxy/src/providers/vertex/token.ts';
import { signVertex, vertexAuthRejected } from '../../proxy/src/providers/vertex/auth.ts';
import { checkConfig, ConfigError, configFromEnv } from '../../proxy/src/config/load.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { createServiceAccount, type ServiceAccountKeyFile } from '../mock-provider/vertex.ts';

const chat = (extra: Partial<ChatRequest> = {}): ChatRequest =>
  ({ model: 'm', messages: [{ role: 'user', content: 'Hello' }], ...extra }) as ChatRequest;
const cfg = (extra: Partial<VertexKeyConfig> = {}): VertexKeyConfig => ({ project_id: 'proj-1', region: 'europe-west4', ...extra });
const key = (vertex: VertexKeyConfig | undefined, value = ''): ProviderKey => ({ id: 'k', name: 'k', value, models: null, weight: 1, vertex });

let mock: MockProvider;
let sa: ServiceAccountKeyFile;
let saText: string;
before(async () => {
  mock = await startMockProvider();
  sa = createServiceAccount(mock.url, { tokenLifetimeSeconds: 1000 });
  saText = JSON.stringify(sa);
});
after(() => mock.close());

const tokenRequests = () => mock.requests.filter((r) => r.path === '/vertex/token').length;

describe('vertex paths', () => {
  test('claude-* goes to the anthropic publisher, everything else to google', () => {
    assert.equal(publisherFor('claude-sonnet-4-5@20250929'), 'anthropic');
    assert.equal(publisherFor('gemini-2.5-flash'), 'google');
    assert.equal(publisherFor('text-embedding-005'), 'google');
  });

  test('regional, global and multi-region hosts', () => {
    assert.equal(vertexOrigin('us-central1'), 'https://us-central1-aiplatform.googleapis.com');
    assert.equal(vertexOrigin('global'), 'https://aiplatform.googleapis.com');
    assert.equal(vertexOrigin('eu'), 'https://aiplatform.eu.rep.googleapis.com');
  });

  test('adapter paths per publisher, JSON and streaming, scoped by the key', () => {
    const g = vertexAdapter.chatRequest(chat(), 'gemini-2.5-flash', false);
    const gs = vertexAdapter.chatRequest(chat(), 'gemini-2.5-flash', true);
    const c = vertexAdapter.chatRequest(chat(), 'claude-sonnet-4-5@20250929', false);
    const cs = vertexAdapter.chatRequest(chat(), 'claude-sonnet-4-5@20250929', true);
    const e = vertexAdapter.embeddingsRequest!({ model: 'm', input: 'x' }, 'text-embedding-005');
    const scope = (p: string) => scopedPath(`/v1${p}`, cfg());
    assert.equal(scope(g.path), '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
    assert.equal(scope(gs.path), '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(scope(c.path), '/v1/projects/proj-1/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
    assert.equal(scope(cs.path), '/v1/projects/proj-1/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict');
    assert.equal(scope(e.path), '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/text-embedding-005:predict');
  });

  test('deployments rename a model or point at a numeric endpoint; a base_url path is kept', () => {
    const deployments = { 'claude-sonnet-4-5': 'claude-sonnet-4-5@20250929', 'my-tuned': '1234567890' };
    assert.equal(
      scopedPath('/proxy/v1/publishers/anthropic/models/claude-sonnet-4-5:rawPredict', cfg({ deployments })),
      '/proxy/v1/projects/proj-1/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
    );
    assert.equal(
      scopedPath('/v1/publishers/google/models/my-tuned:generateContent', cfg({ deployments })),
      '/v1/projects/proj-1/locations/europe-west4/endpoints/1234567890:generateContent',
    );
  });
});

describe('vertex bodies, embeddings and errors', () => {
  test('Claude body: the Messages request without model, with anthropic_version', () => {
    const body = toVertexClaudeRequest(chat({ max_tokens: 50, temperature: 0.5 }), 'claude-sonnet-4-5', true);
    assert.equal('model' in body, false);
    assert.equal(body.anthropic_version, 'vertex-2023-10-16');
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, 50);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }]);
    assert.equal('stream' in toVertexClaudeRequest(chat(), 'claude-sonnet-4-5', false), false);
  });

  test('Gemini body: the generateContent request unchanged', () => {
    const up = vertexAdapter.chatRequest(chat({ max_tokens: 20 }), 'gemini-2.5-flash', false);
    assert.deepEqual(up.body, { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { maxOutputTokens: 20 } });
  });

  test('embeddings: one instance per text, dimensions as outputDimensionality; token-id input refused', () => {
    assert.deepEqual(toVertexEmbedRequest({ model: 'm', input: ['a', 'b c'], dimensions: 4 }), {
      instances: [{ content: 'a' }, { content: 'b c' }],
      parameters: { outputDimensionality: 4 },
    });
    assert.throws(() => toVertexEmbedRequest({ model: 'm', input: [1, 2] }), (e: GatewayError) => e.status === 400 && e.param === 'input[0]');
    const res = fromVertexEmbedResponse(
      { predictions: [{ embeddings: { values: [0.5, 0.25], statistics: { token_count: 3, truncated: false } } }, { embeddings: { values: [1, 0], statistics: { token_count: 2 } } }] },
      'text-embedding-005',
      'float',
    );
    assert.deepEqual(res.data.map((d) => d.embedding), [[0.5, 0.25], [1, 0]]);
    assert.deepEqual(res.usage, { prompt_tokens: 5, total_tokens: 5 });
  });

  test('errors: Anthropic-shaped bodies read as Anthropic errors, others as Google errors', () => {
    const a = vertexAdapter.error(400, { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    assert.deepEqual([a.type, a.message], ['invalid_request_error', 'max_tokens: Field required']);
    const g = vertexAdapter.error(429, { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } });
    assert.deepEqual([g.type, g.message], ['RESOURCE_EXHAUSTED', 'Quota exceeded']);
    assert.equal(vertexAdapter.error(502, '').message, 'Vertex AI returned HTTP 502');
  });
});

describe('vertex service accounts and the signed JWT', () => {
  test('broken key files are refused with a reason and without echoing the key', () => {
    const cases: [string, RegExp][] = [
      ['not json', /not valid JSON/],
      [JSON.stringify({ ...sa, type: 'authorized_user' }), /only 'service_account'/],
      [JSON.stringify({ ...sa, client_email: undefined }), /no client_email/],
      [JSON.stringify({ ...sa, private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }), /not a valid PEM private key/],
      [JSON.stringify({ ...sa, token_uri: 'ftp://x' }), /token_uri/],
    ];
    for (const [text, reason] of cases) {
      assert.throws(() => serviceAccount(text), (e: Error) => reason.test(e.message) && !e.message.includes('PRIVATE KEY'));
    }
    assert.equal(serviceAccount(JSON.stringify({ ...sa, token_uri: undefined })).tokenUri, 'https://oauth2.googleapis.com/token');
  });

  test('RS256 JWT with kid, iss, scope, aud = token_uri, one hour; signature verifies with the public key', () => {
    const account = serviceAccount(saText);
    const jwt = jwtAssertion(account, 1_700_000_000);
    const [h, c, s] = jwt.split('.');
    assert.deepEqual(JSON.parse(Buffer.from(h, 'base64url').toString()), { alg: 'RS256', typ: 'JWT', kid: sa.private_key_id });
    assert.deepEqual(JSON.parse(Buffer.from(c, 'base64url').toString()), {
      iss: sa.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: `${mock.url}/vertex/token`, iat: 1_700_000_000, exp: 1_700_003_600,
    });
    const publicKey = createPublicKey(sa.private_key);
    assert.ok(verify('sha256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(s, 'base64url')));
  });
});

describe('vertex token cache (against the mock token endpoint)', () => {
  test('fetched once, shared by concurrent callers, refreshed shortly before expiry', async () => {
    let now = Date.now();
    const cache = new TokenCache(() => now);
    const account = serviceAccount(saText);
    const before = tokenRequests();
    const [t1, t2] = await Promise.all([cache.token(account), cache.token(account)]);
    assert.equal(t1, t2);
    assert.equal(await cache.token(account), t1);
    assert.equal(tokenRequests() - before, 1);
    // 1000 s lifetime: refreshed 100 s (a tenth) before expiry.
    now += 899_000;
    assert.equal(await cache.token(account), t1);
    now += 2_000;
    const t3 = await cache.token(account);
    assert.notEqual(t3, t1);
    assert.equal(tokenRequests() - before, 2);
  });

  test('a rejected token is dropped; a stale rejection leaves the newer token alone', async () => {
    const cache = new TokenCache();
    const account = serviceAccount(saText);
    const t1 = await cache.token(account);
    cache.reject(account, t1);
    const t2 = await cache.token(account);
    assert.notEqual(t2, t1);
    cache.reject(account, t1);
    assert.equal(await cache.token(account), t2);
  });

  test('a key the endpoint refuses is a 401 naming the account and the reason', async () => {
    const stranger = createServiceAccount(mock.url);
    const forged = JSON.stringify({ ...stranger, private_key: sa.private_key });
    await assert.rejects(new TokenCache().token(serviceAccount(forged)), (e: GatewayError) =>
      e.status === 401 && e.code === 'invalid_grant' && e.message.includes(stranger.client_email) && /Invalid JWT Signature/.test(e.message));
  });
});

describe('vertex request signing', () => {
  const req = (origin: string, path: string) => ({ method: 'POST', origin, path, headers: { accept: 'application/json' }, body: '{}' });

  test('a service account gets a bearer token; the path is scoped; each key uses its region host', async () => {
    const signed = await signVertex(req('https://us-central1-aiplatform.googleapis.com', '/v1/publishers/google/models/gemini-2.5-flash:generateContent'), key(cfg({ auth_credentials: saText })));
    assert.match(signed.headers.authorization, /^Bearer ya29\./);
    assert.equal(signed.path, '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
    assert.equal(signed.origin, 'https://europe-west4-aiplatform.googleapis.com');
    const custom = await signVertex(req(mock.url, '/vertex/v1/publishers/google/models/g:generateContent'), key(cfg({ auth_credentials: saText })));
    assert.equal(custom.origin, mock.url);
  });

  test('without credentials, the key value is a Vertex API key for Google models', async () => {
    const signed = await signVertex(req(mock.url, '/v1/publishers/google/models/gemini-2.5-flash:generateContent'), key(cfg(), 'AIza-test'));
    assert.equal(signed.headers['x-goog-api-key'], 'AIza-test');
    assert.equal(signed.headers.authorization, undefined);
  });

  test('a 401 drops the cached token of a service-account key only', async () => {
    const k = key(cfg({ auth_credentials: saText }));
    const first = await signVertex(req(mock.url, '/v1/publishers/google/models/g:generateContent'), k);
    assert.equal(vertexAuthRejected(k, first.headers), true);
    const second = await signVertex(req(mock.url, '/v1/publishers/google/models/g:generateContent'), k);
    assert.notEqual(second.headers.authorization, first.headers.authorization);
    assert.equal(vertexAuthRejected(key(cfg(), 'AIza-test'), { 'x-goog-api-key': 'AIza-test' }), false);
  });

  test('a key without vertex_key_config is a gateway error', async () => {
    await assert.rejects(signVertex(req(mock.url, '/v1/x'), key(undefined, 'v')), (e: GatewayError) => e.status === 500 && /vertex_key_config/.test(e.message));
  });
});

describe('vertex config', () => {
  const provider = (keyExtra: Record<string, unknown>) => ({ providers: { vertex: { keys: [{ name: 'v', value: '', weight: 1, ...keyExtra }] } } });

  test('auth_credentials from an env.VAR, checked at load time', () => {
    const loaded = checkConfig(provider({ vertex_key_config: { project_id: 'p', region: 'global', auth_credentials: 'env.VERTEX_SA' } }), 'test', { VERTEX_SA: saText });
    assert.equal(loaded.config.providers?.vertex.keys?.[0].vertex_key_config?.auth_credentials, saText);
  });

  test('a missing vertex_key_config or a broken key file stops loading, naming the field', () => {
    const fail = (raw: unknown) => {
      try {
        checkConfig(raw, 'test', {});
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.errors.map((e) => `${e.path}: ${e.message}`).join('\n');
      }
      return assert.fail('expected a ConfigError');
    };
    assert.match(fail(provider({})), /providers\.vertex\.keys\[0\]\.vertex_key_config: is required/);
    assert.match(fail(provider({ vertex_key_config: { project_id: 'p', region: 'r', auth_credentials: '{"type":"service_account"}' } })),
      /providers\.vertex\.keys\[0\]\.vertex_key_config\.auth_credentials: has no client_email/);
    assert.match(fail(provider({ vertex_key_config: { project_id: 'p' } })), /region/);
  });

  test('from the environment: project, region and credentials', () => {
    const config = configFromEnv({ VERTEX_PROJECT_ID: 'p1', VERTEX_REGION: 'us-east5', VERTEX_CREDENTIALS: saText });
    assert.deepEqual(config.providers?.vertex.keys?.[0].vertex_key_config, { project_id: 'p1', region: 'us-east5', auth_credentials: saText });
    assert.equal(configFromEnv({}).providers?.vertex, undefined);
  });
});
