// The mock's Vertex AI dialect: the OAuth token endpoint (raw HTTP, assertions signed here with
// node:crypto), Gemini checked with the official @google/genai SDK in Vertex mode, Claude's
// rawPredict with raw HTTP (the Anthropic Vertex SDK is not installed).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { GoogleGenAI, ApiError } from '@google/genai';
import { OAuth2Client } from 'google-auth-library';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { createServiceAccount, revokeTokens, type ServiceAccountKeyFile } from '../mock-provider/vertex.ts';
import { parseSse, postRaw } from './mock-provider-helpers.ts';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

let mock: MockProvider;
let account: ServiceAccountKeyFile;
let accessToken: string;

function assertion(sa: ServiceAccountKeyFile, claims: Record<string, unknown> = {}, key?: KeyObject): string {
  const now = Math.floor(Date.now() / 1000);
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${enc({ alg: 'RS256', typ: 'JWT', kid: sa.private_key_id })}.${enc({
    iss: sa.client_email, scope: SCOPE, aud: sa.token_uri, iat: now, exp: now + 3600, ...claims,
  })}`;
  return `${input}.${sign('sha256', Buffer.from(input), key ?? sa.private_key).toString('base64url')}`;
}

async function exchange(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${mock.url}/vertex/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

before(async () => {
  mock = await startMockProvider();
  account = createServiceAccount(mock.url, { tokenLifetimeSeconds: 600 });
  const issued = await exchange({ grant_type: JWT_BEARER, assertion: assertion(account) });
  accessToken = String(issued.body.access_token);
});
after(() => mock.close());

describe('vertex token endpoint', () => {
  test('a well-signed assertion gets a bearer token with expires_in', async () => {
    const res = await exchange({ grant_type: JWT_BEARER, assertion: assertion(account) });
    assert.equal(res.status, 200);
    assert.match(String(res.body.access_token), /^ya29\./);
    assert.equal(res.body.expires_in, 600);
    assert.equal(res.body.token_type, 'Bearer');
  });

  test('an assertion signed with another key is an invalid_grant', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const res = await exchange({ grant_type: JWT_BEARER, assertion: assertion(account, {}, privateKey) });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
  });

  test('wrong audience, stale claims, missing scope and grant type are refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [Record<string, string>, string][] = [
      [{ grant_type: JWT_BEARER, assertion: assertion(account, { aud: 'https://oauth2.googleapis.com/token' }) }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: assertion(account, { iat: now - 7200, exp: now - 3600 }) }, 'invalid_grant'],
      [{ grant_type: JWT_BEARER, assertion: assertion(account, { scope: 'https://www.googleapis.com/auth/devstorage.read_only' }) }, 'invalid_scope'],
      [{ grant_type: 'client_credentials', assertion: assertion(account) }, 'unsupported_grant_type'],
    ];
    for (const [form, error] of cases) {
      const res = await exchange(form);
      assert.equal(res.status, 400);
      assert.equal(res.body.error, error, JSON.stringify(res.body));
    }
  });
});

describe('vertex Gemini through the @google/genai SDK in Vertex mode', () => {
  let ai: GoogleGenAI;
  before(() => {
    const authClient = new OAuth2Client();
    authClient.setCredentials({ access_token: accessToken, expiry_date: Date.now() + 600_000 });
    ai = new GoogleGenAI({
      vertexai: true,
      project: 'mock-project',
      location: 'europe-west4',
      googleAuthOptions: { authClient },
      httpOptions: { baseUrl: `${mock.url}/vertex`, apiVersion: 'v1' },
    });
  });

  test('generateContent on the regional publisher path with the bearer token', async () => {
    const res = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hello vertex mock' });
    assert.equal(res.text, 'Mock reply to: Hello vertex mock');
    const seen = mock.requests.at(-1)!;
    assert.equal(seen.format, 'vertex');
    assert.equal(seen.path, '/vertex/v1/projects/mock-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
    assert.equal(seen.headers.authorization, `Bearer ${accessToken}`);
  });

  test('generateContentStream', async () => {
    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'stream from vertex' })) text += chunk.text ?? '';
    assert.equal(text, 'Mock reply to: stream from vertex');
    assert.equal(mock.requests.at(-1)!.query.alt, 'sse');
  });

  test('embedContent goes to :predict and reads predictions', async () => {
    const res = await ai.models.embedContent({ model: 'text-embedding-005', contents: ['one', 'two words'], config: { outputDimensionality: 4 } });
    assert.equal(res.embeddings?.length, 2);
    assert.equal(res.embeddings?.[0].values?.length, 4);
    assert.equal(res.embeddings?.[1].statistics?.tokenCount, 2);
    assert.match(mock.requests.at(-1)!.path, /publishers\/google\/models\/text-embedding-005:predict$/);
  });

  test('a revoked token is a 401 UNAUTHENTICATED', async () => {
    const other = createServiceAccount(mock.url);
    const issued = await exchange({ grant_type: JWT_BEARER, assertion: assertion(other) });
    const client = new OAuth2Client();
    client.setCredentials({ access_token: String(issued.body.access_token), expiry_date: Date.now() + 600_000 });
    const sdk = new GoogleGenAI({
      vertexai: true, project: 'p', location: 'us-central1', googleAuthOptions: { authClient: client },
      httpOptions: { baseUrl: `${mock.url}/vertex`, apiVersion: 'v1' },
    });
    await sdk.models.generateContent({ model: 'gemini-2.5-flash', contents: 'before' });
    revokeTokens(other.client_email);
    const err = await sdk.models.generateContent({ model: 'gemini-2.5-flash', contents: 'after' }).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, 401);
    assert.match(err.message, /UNAUTHENTICATED/);
  });
});

describe('vertex Claude rawPredict', () => {
  const url = (model: string, method: string) =>
    `${mock.url}/vertex/v1/projects/mock-project/locations/us-east5/publishers/anthropic/models/${model}:${method}`;
  const auth = () => ({ authorization: `Bearer ${accessToken}` });
  const body = { anthropic_version: 'vertex-2023-10-16', max_tokens: 50, messages: [{ role: 'user', content: 'Hello claude' }] };

  test('rawPredict answers an Anthropic message for the model in the URL', async () => {
    const res = await postRaw(url('claude-sonnet-4-5@20250929', 'rawPredict'), body, auth());
    assert.equal(res.status, 200);
    const msg = JSON.parse(res.text) as { model: string; content: { text: string }[] };
    assert.equal(msg.model, 'claude-sonnet-4-5@20250929');
    assert.equal(msg.content[0].text, 'Mock reply to: Hello claude');
  });

  test('streamRawPredict answers the Messages SSE events', async () => {
    const res = await postRaw(url('claude-sonnet-4-5', 'streamRawPredict'), { ...body, stream: true }, auth());
    assert.equal(res.status, 200);
    const events = parseSse(res.text).map((e) => e.event);
    assert.equal(events[0], 'message_start');
    assert.equal(events.at(-1), 'message_stop');
  });

  test('a model field, or a missing or wrong anthropic_version, is a 400', async () => {
    for (const [sent, message] of [
      [{ ...body, model: 'claude-sonnet-4-5' }, /model: Extra inputs are not permitted/],
      [{ ...body, anthropic_version: undefined }, /anthropic_version: Field required/],
      [{ ...body, anthropic_version: '2023-06-01' }, /anthropic_version: Input should be 'vertex-2023-10-16'/],
    ] as const) {
      const res = await postRaw(url('claude-sonnet-4-5', 'rawPredict'), sent, auth());
      assert.equal(res.status, 400);
      assert.match(res.text, message);
    }
  });

  test('no credentials, or an API key, is a 401 in Google\'s shape', async () => {
    for (const headers of [{}, { 'x-goog-api-key': 'AIza-test' }] as Record<string, string>[]) {
      const res = await postRaw(url('claude-sonnet-4-5', 'rawPredict'), body, headers);
      assert.equal(res.status, 401);
      const err = (JSON.parse(res.text) as { error: { code: number; status: string } }).error;
      assert.equal(err.code, 401);
      assert.equal(err.status, 'UNAUTHENTICATED');
    }
  });
});
