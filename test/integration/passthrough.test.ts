// /<provider>_passthrough/...: forwarded untouched, auth injected from the key pool; the path and
// headers kept within bounds, redirects and the gateway's own keys never relayed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { mockProviders } from '../helpers/providers.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

test('GET is forwarded with the provider key instead of the client credentials', async () => {
  const res = await fetch(`${stack.gateway.url}/openai_passthrough/v1/models?limit=5`, { headers: { authorization: 'Bearer client-secret', 'x-custom': 'kept' } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: { id: string }[] };
  assert.ok(body.data.some((m) => m.id === 'gpt-4o'));
  const seen = stack.mock.requests.at(-1)!;
  assert.equal(seen.path, '/openai/v1/models');
  assert.equal(seen.headers.authorization, 'Bearer sk-openai-test');
  assert.equal(seen.headers['x-custom'], 'kept');
});

test('a native streaming POST streams back untouched', async () => {
  const res = await fetch(`${stack.gateway.url}/anthropic_passthrough/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'raw stream' }] }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const text = await res.text();
  assert.equal(text, stack.mock.requests.at(-1)!.responseBody);
  assert.equal(stack.mock.requests.at(-1)!.headers['x-api-key'], 'sk-anthropic-test');
});

test('upstream errors keep their status and body; unknown providers are 404', async () => {
  stack.mock.inject({ format: 'gemini', status: 429, retryAfter: 3 });
  const res = await fetch(`${stack.gateway.url}/gemini_passthrough/v1beta/models`);
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '3');
  assert.equal(((await res.json()) as { error: { status: string } }).error.status, 'RESOURCE_EXHAUSTED');
  const missing = await fetch(`${stack.gateway.url}/groq_passthrough/v1/models`);
  assert.equal(missing.status, 404);
});

// --- Upstream hygiene: the path as received and never above the base path, only the request's own
// headers, no redirects relayed, and the gateway's key never echoed back. ---

/** A raw HTTP/1.1 request: fetch would normalise `..` and `%2e%2e` before sending. */
function rawRequest(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the path goes upstream exactly as received, percent-escapes and query included', async () => {
  const res = await rawRequest(stack.gateway.url, '/openai_passthrough/v1/models/gpt%2D4o?after=a%2Fb&x=%20');
  assert.equal(res.status, 200, res.body);
  const seen = stack.mock.requests.at(-1)!;
  assert.equal(seen.path, '/openai/v1/models/gpt%2D4o');
});

test('a path that could leave the base path is a 400 and never reaches the provider', async () => {
  const before = stack.mock.requests.length;
  for (const path of [
    '/openai_passthrough/v1/%2e%2e/%2e%2e/admin',
    '/openai_passthrough/%2E%2E/secret',
    '/openai_passthrough/v1/..%2f..%2fadmin',
    '/openai_passthrough/v1/..%5c..%5cadmin',
    '/openai_passthrough/v1/%252e%252e/%252e%252e/admin',
    '/openai_passthrough/v1/../../admin',
    '/openai_passthrough/v1/./models',
    '/openai_passthrough/v1/a%00b',
    // Servlet-style servers drop ';params' from a segment before resolving it.
    '/openai_passthrough/v1/..;/..;/admin',
    '/openai_passthrough/v1/%2e%2e;x=1/admin',
    '/openai_passthrough/v1/.;/models',
  ]) {
    const res = await rawRequest(stack.gateway.url, path);
    assert.equal(res.status, 400, `${path}: ${res.body}`);
    const err = (JSON.parse(res.body) as { error: { message: string } }).error;
    assert.match(err.message, /passthrough path/);
  }
  assert.equal(stack.mock.requests.length, before);
});

test('hop-by-hop and client-identity headers stay at the gateway', async () => {
  const res = await rawRequest(stack.gateway.url, '/openai_passthrough/v1/models', {
    cookie: 'session=client-cookie',
    'x-forwarded-for': '10.1.2.3',
    'x-forwarded-host': 'evil.example',
    forwarded: 'for=10.1.2.3',
    'x-real-ip': '10.1.2.3',
    via: '1.1 client-proxy',
    'proxy-authorization': 'Basic c2VjcmV0',
    connection: 'keep-alive, x-hop-secret',
    'x-hop-secret': 'not for upstream',
    'x-api-key': 'client-key',
    'x-amz-security-token': 'client-session-token',
    'x-custom': 'kept',
  });
  assert.equal(res.status, 200, res.body);
  const h = stack.mock.requests.at(-1)!.headers;
  for (const name of ['cookie', 'x-forwarded-for', 'x-forwarded-host', 'forwarded', 'x-real-ip', 'via', 'proxy-authorization', 'x-hop-secret', 'x-api-key', 'x-amz-security-token']) {
    assert.equal(h[name], undefined, `${name} was forwarded`);
  }
  assert.equal(h['x-custom'], 'kept');
  assert.equal(h.authorization, 'Bearer sk-openai-test');
});

describe('against an upstream that redirects, sets cookies and echoes keys', () => {
  const SECRET = 'sk-live-gateway-secret-0123456789';
  let upstream: Server;
  let gw: InProcessGateway;
  const seen: string[] = [];
  before(async () => {
    upstream = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url?.startsWith('/up/v1/moved')) {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      } else if (req.url?.startsWith('/up/v1/echo')) {
        res.writeHead(401, { 'content-type': 'application/json', 'set-cookie': 'upstream=1', 'x-upstream': 'yes' });
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${String(req.headers.authorization).slice(7)}`, header: req.headers.authorization } }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'upstream=1', connection: 'x-conn-only', 'x-conn-only': 'hop' });
        res.end('{"ok":true}');
      }
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const port = (upstream.address() as AddressInfo).port;
    gw = await startGateway({
      providers: {
        openai: {
          keys: [{ name: 'k', value: SECRET, weight: 1 }],
          network_config: { base_url: `http://127.0.0.1:${port}/up`, max_retries: 0 },
          // Not inference paths: listed so any caller reaches them.
          passthrough_allowed_paths: ['/v1/moved', '/v1/echo', '/v1/fine'],
        },
      },
    });
  });
  after(async () => {
    await gw?.stop();
    await new Promise((r) => upstream?.close(r) ?? r(undefined));
  });

  test('an upstream redirect is a 502, not relayed', async () => {
    const res = await fetch(`${gw.url}/openai_passthrough/v1/moved`, { redirect: 'manual' });
    assert.equal(res.status, 502);
    assert.equal(res.headers.get('location'), null);
    const err = ((await res.json()) as { error: { message: string; type: string } }).error;
    assert.equal(err.type, 'upstream_redirect');
    assert.match(err.message, /redirect \(302\)/);
  });

  test("the gateway's key is scrubbed from a relayed error; upstream cookies are not relayed", async () => {
    const res = await fetch(`${gw.url}/openai_passthrough/v1/echo`);
    assert.equal(res.status, 401);
    const text = await res.text();
    assert.ok(!text.includes(SECRET), text);
    assert.match(text, /\[REDACTED\]/);
    assert.equal(res.headers.get('x-upstream'), 'yes');
    assert.equal(res.headers.get('set-cookie'), null);
    const ok = await fetch(`${gw.url}/openai_passthrough/v1/fine`);
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('set-cookie'), null);
    assert.equal(ok.headers.get('x-conn-only'), null);
    assert.deepEqual(await ok.json(), { ok: true });
  });
});

describe('paths: inference ones for everyone, others only when listed or with a management credential', () => {
  const MGMT = 'mgmt-key-0123456789abcdef';
  const VK = 'sk-bf-dev-0123456789';
  let mock: MockProvider | undefined;
  let gw: InProcessGateway | undefined;
  before(async () => {
    mock = await startMockProvider();
    gw = await startGateway({
      providers: mockProviders(mock.url, { openai: { passthrough_allowed_paths: ['/v1/files', '/v1/files/*'] } }),
      governance: {
        auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'admin-password-0123', api_keys: [MGMT] },
        virtual_keys: [{ id: 'dev', name: 'dev', value: VK, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] }],
      },
    });
    // `allowed_models: ['*']` reads each provider's catalog once at start: not a client's call.
    await eventually(() => assert.equal(mock!.requests.filter((r) => r.path.endsWith('/models')).length, 3), 30_000);
  });
  after(async () => {
    await gw?.stop();
    await mock?.close();
  });

  const call = (path: string, headers: Record<string, string> = {}, method = 'GET', body?: string) => rawRequestWith(gw!.url, path, method, headers, body);

  test("a virtual key (or no key) cannot reach the provider's admin API: 403 naming the path, nothing sent upstream", async () => {
    const sent = mock!.requests.length;
    for (const headers of [{ 'x-bf-vk': VK }, {}, { authorization: 'Bearer not-a-management-key' }] as Record<string, string>[]) {
      for (const [method, path] of [
        ['GET', '/openai_passthrough/v1/organization/admin_api_keys'],
        ['POST', '/openai_passthrough/v1/organization/admin_api_keys'],
        ['GET', '/openai_passthrough/v1/organization%2Fadmin_api_keys'],
        ['DELETE', '/openai_passthrough/v1/models/gpt-4o'],
        ['POST', '/openai_passthrough/v1/fine_tuning/jobs'],
      ]) {
        // From an address of its own: the wrong Bearer values count as guesses (tested below).
        const res = await rawRequestWith(gw!.url, path, method, headers, undefined, '127.0.0.32');
        assert.equal(res.status, 403, `${method} ${path}: ${res.body}`);
        const err = (JSON.parse(res.body) as { error: { message: string; code: string; param: string } }).error;
        assert.equal(err.code, 'passthrough_path_not_allowed');
        assert.equal(err.param, 'path');
        assert.ok(err.message.includes(path.slice('/openai_passthrough'.length)), err.message);
        assert.match(err.message, /passthrough_allowed_paths/);
      }
    }
    assert.equal(mock!.requests.length, sent);
  });

  test('inference paths and the listed ones go through with a virtual key', async () => {
    const chat = await call('/openai_passthrough/v1/chat/completions', { 'x-bf-vk': VK, 'content-type': 'application/json' }, 'POST', JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    assert.equal(chat.status, 200, chat.body);
    assert.equal((await call('/openai_passthrough/v1/models', { 'x-bf-vk': VK })).status, 200);
    const sent = mock!.requests.length;
    await call('/openai_passthrough/v1/files/file-abc', { 'x-bf-vk': VK });
    assert.equal(mock!.requests.at(-1)?.path, '/openai/v1/files/file-abc');
    assert.equal(mock!.requests.length, sent + 1);
  });

  test('wrong management credentials on a refused path count as guesses: the fifth locks the address out (429)', async () => {
    const from = '127.0.0.31';
    const wrong = (i: number) => rawRequestWith(gw!.url, '/openai_passthrough/v1/organization/admin_api_keys', 'GET', { authorization: `Bearer mgmt-guess-${i}` }, undefined, from);
    for (let i = 0; i < 5; i++) assert.equal((await wrong(i)).status, 403);
    const locked = await rawRequestWith(gw!.url, '/openai_passthrough/v1/organization/admin_api_keys', 'GET', { authorization: `Bearer ${MGMT}` }, undefined, from);
    assert.equal(locked.status, 429, locked.body);
  });

  test('a management credential (API key or admin Basic auth) reaches any path', async () => {
    for (const headers of [{ authorization: `Bearer ${MGMT}` }, { 'x-api-key': MGMT }, { authorization: `Basic ${Buffer.from('admin:admin-password-0123').toString('base64')}` }] as Record<string, string>[]) {
      const sent = mock!.requests.length;
      const res = await call('/openai_passthrough/v1/organization/admin_api_keys', headers);
      assert.notEqual(res.status, 403, res.body);
      assert.equal(mock!.requests.length, sent + 1);
      const seen = mock!.requests.at(-1)!;
      assert.equal(seen.path, '/openai/v1/organization/admin_api_keys');
      // The management credential itself stays at the gateway.
      assert.equal(seen.headers.authorization, 'Bearer sk-openai-test');
      assert.equal(seen.headers['x-api-key'], undefined);
    }
  });
});

function rawRequestWith(url: string, path: string, method: string, headers: Record<string, string>, body?: string, localAddress?: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method, headers, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
