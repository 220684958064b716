// The dashboard's server side through running gateways: the page and its assets (headers,
// compression, ETag), who may load it, the session cookie, /api/dashboard, WebSocket tickets and
// the live socket (log events, request_error and budget_threshold notifications, garbage frames).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { TicketStore } from '../../proxy/src/api/ws-tickets.ts';
import { gatewayInfo } from '../../proxy/src/api/dashboard-info.ts';
import { kubeOrigin } from '../../proxy/src/config/kube-source.ts';

const ADMIN = 'admin';
const PASSWORD = 'dashboard-password-0123456789';
/** Every token costs a cent: the first answer (a few dozen tokens) crosses a $0.05 budget's 80 % and 100 %. */
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];
const VK = 'sk-bf-dash-vk-0123456789';

let mock: MockProvider;
let open: RunningGateway;
let secured: RunningGateway;
let dist: string;
const JS = `// dashboard bundle\n${Array.from({ length: 400 }, (_, i) => `export const value${i} = ${JSON.stringify('x'.repeat(20) + i)};`).join('\n')}\n`;
const CSS = 'body{color:#111}';

function writeDist(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-dash-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><html><head><link rel="stylesheet" href="/assets/app-T3ST.css"></head><body><div id="app"></div><script type="module" src="/assets/app-T3ST.js"></script></body></html>');
  writeFileSync(join(dir, 'assets', 'app-T3ST.js'), JS);
  writeFileSync(join(dir, 'assets', 'app-T3ST.css'), CSS);
  return dir;
}

before(async () => {
  mock = await startMockProvider();
  dist = writeDist();
  const env = { SKYBRIDGE_DASHBOARD_DIR: dist };
  const providers = mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN } });
  const logsStore = { enabled: true, type: 'sqlite', config: { path: 'logs.db' } };
  [open, secured] = await Promise.all([
    startGateway(
      {
        providers,
        logs_store: logsStore,
        governance: {
          budgets: [{ id: 'dash-budget', max_limit: 0.05, reset_duration: '1d' }],
          virtual_keys: [{ id: 'dash-vk', name: 'dash-vk', value: VK, budget_id: 'dash-budget', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] }],
        },
      },
      { env, args: ['--host', '0.0.0.0'] },
    ),
    startGateway({ providers, logs_store: logsStore, governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } } }, { env, args: ['--host', '0.0.0.0'] }),
  ]);
});
after(async () => {
  await Promise.all([open?.stop(), secured?.stop()]);
  await mock?.close();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A plain HTTP/1.1 request with exactly these headers (fetch would add and decode encodings). */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A WebSocket handshake by hand: the status the gateway answers (101 when it upgrades). */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url.replace(/^ws:/, 'http:'), {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), ...headers },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function externalIpv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

async function login(g: RunningGateway, headers: Record<string, string> = {}): Promise<{ cookie: string; setCookie: string }> {
  const r = await raw(`${g.url}/api/session/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username: ADMIN, password: PASSWORD }) });
  assert.equal(r.status, 200, r.body.toString());
  const setCookie = ([] as string[]).concat(r.headers['set-cookie'] ?? [])[0];
  assert.ok(setCookie, 'login sets a cookie');
  return { cookie: setCookie.split(';')[0], setCookie };
}

/** A live socket collecting its JSON messages. */
async function live(url: string): Promise<{ ws: WebSocket; messages: Record<string, unknown>[]; close(): void }> {
  const ws = new WebSocket(url);
  const messages: Record<string, unknown>[] = [];
  ws.addEventListener('message', (e) => messages.push(JSON.parse(String(e.data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`WebSocket ${url} did not open`)), { once: true });
  });
  return { ws, messages, close: () => ws.close() };
}

const wsUrl = (g: RunningGateway, query = '') => `${g.url.replace('http://', 'ws://')}/ws${query}`;

async function chat(g: RunningGateway, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Say hello in five words' }] }),
  });
}

// ---------------------------------------------------------------------------------------------

test('the page: no-cache, a strict CSP and security headers; HEAD has no body; other methods 405', async () => {
  for (const path of ['/', '/index.html']) {
    const r = await raw(`${open.url}${path}`);
    assert.equal(r.status, 200);
    assert.match(r.body.toString(), /<div id="app"><\/div>/);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(r.headers['cache-control'], 'no-cache');
    const csp = String(r.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, new RegExp(`connect-src 'self' ws://127\\.0\\.0\\.1:${open.port} wss://127\\.0\\.0\\.1:${open.port}`));
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
  }
  const head = await raw(`${open.url}/`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.ok(Number(head.headers['content-length']) > 0);
  const post = await raw(`${open.url}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
  // A host name that could smuggle a directive into the CSP is left out of it.
  const odd = await raw(`${open.url}/`, { headers: { host: '127.0.0.1;script-src *' } });
  assert.doesNotMatch(String(odd.headers['content-security-policy'] ?? ''), /script-src \*/);
});

test('assets: immutable caching, brotli or gzip by Accept-Encoding with Vary, strong ETags answered 304, unknown names 404', async () => {
  const url = `${open.url}/assets/app-T3ST.js`;
  const br = await raw(url, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(br.headers.vary, 'accept-encoding');
  assert.equal(br.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(brotliDecompressSync(br.body).toString(), JS);
  assert.ok(br.body.length < JS.length / 4, `brotli ${br.body.length} of ${JS.length} bytes`);

  const gz = await raw(url, { headers: { 'accept-encoding': 'gzip, br;q=0' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gz.body).toString(), JS);

  const plain = await raw(url);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.body.toString(), JS);

  const etags = new Set([br.headers.etag, gz.headers.etag, plain.headers.etag]);
  assert.equal(etags.size, 3, 'each encoding has its own ETag');
  const again = await raw(url, { headers: { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) } });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  assert.equal(again.headers.etag, br.headers.etag);
  const stale = await raw(url, { headers: { 'accept-encoding': 'br', 'if-none-match': '"something-else"' } });
  assert.equal(stale.status, 200);

  // A tiny file is not worth compressing: served as it is.
  const css = await raw(`${open.url}/assets/app-T3ST.css`, { headers: { 'accept-encoding': 'br, gzip' } });
  assert.equal(css.status, 200);
  assert.equal(css.headers['content-encoding'], undefined);
  assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
  assert.equal(css.body.toString(), CSS);

  for (const bad of ['/assets/nope.js', '/assets/..%2Findex.html', '/assets/.hidden', '/assets/a/b.js']) {
    const r = await raw(`${open.url}${bad}`);
    assert.equal(r.status, 404, bad);
    assert.equal((JSON.parse(r.body.toString()) as { error: { type: string } }).error.type, 'not_found_error');
  }
});

test('without management auth the page answers loopback clients addressing a local name only; with auth, anyone', async (t) => {
  const rebinding = await raw(`${open.url}/`, { headers: { host: 'attacker.example' } });
  assert.equal(rebinding.status, 401);
  const ip = externalIpv4();
  if (!ip) {
    t.diagnostic('no non-loopback IPv4 address on this machine: the remote half is skipped');
    return;
  }
  const remote = await raw(`http://${ip}:${open.port}/`);
  assert.equal(remote.status, 401);
  assert.match(JSON.parse(remote.body.toString()).error.message, /auth_config/);
  assert.equal((await raw(`http://${ip}:${open.port}/assets/app-T3ST.js`)).status, 401);
  // The page holds no data: with auth on it loads anywhere (the API asks for credentials).
  assert.equal((await raw(`http://${ip}:${secured.port}/`)).status, 200);
  assert.equal((await raw(`http://${ip}:${secured.port}/api/providers`)).status, 401);
});

test('login sets an HttpOnly SameSite=Strict cookie that authenticates /api; logout revokes and clears it', async () => {
  const { cookie, setCookie } = await login(secured);
  assert.match(setCookie, /^skybridge_session=[A-Za-z0-9_.-]{40,}; /);
  assert.match(setCookie, /; HttpOnly/);
  assert.match(setCookie, /; SameSite=Strict/);
  assert.match(setCookie, /; Path=\//);
  assert.match(setCookie, /; Max-Age=86400/);
  assert.doesNotMatch(setCookie, /Secure/, 'plain HTTP: a Secure cookie would not come back');
  const behindTls = await login(secured, { 'x-forwarded-proto': 'https' });
  assert.match(behindTls.setCookie, /; Secure/);

  assert.equal((await raw(`${secured.url}/api/providers`)).status, 401);
  assert.equal((await raw(`${secured.url}/api/providers`, { headers: { cookie } })).status, 200);
  // Among other cookies of the same host.
  assert.equal((await raw(`${secured.url}/api/providers`, { headers: { cookie: `theme=dark; ${cookie}; other=1` } })).status, 200);
  const state = await raw(`${secured.url}/api/session/is-auth-enabled`, { headers: { cookie } });
  assert.deepEqual(JSON.parse(state.body.toString()), { is_auth_enabled: true, has_valid_token: true });
  assert.deepEqual(JSON.parse((await raw(`${secured.url}/api/session/is-auth-enabled`, { headers: { cookie: 'skybridge_session=forged' } })).body.toString()), {
    is_auth_enabled: true,
    has_valid_token: false,
  });

  const out = await raw(`${secured.url}/api/session/logout`, { method: 'POST', headers: { cookie } });
  assert.equal(out.status, 200);
  assert.match(([] as string[]).concat(out.headers['set-cookie'] ?? [])[0] ?? '', /^skybridge_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
  assert.equal((await raw(`${secured.url}/api/providers`, { headers: { cookie } })).status, 401, 'the session is over, not just the cookie');
});

test('replicas: a session and a ws ticket from one gateway work on another with the same configuration; not with other credentials', async () => {
  const auth = (password: string) => ({ governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: password } } });
  const [replica, other] = await Promise.all([startGateway(auth(PASSWORD)), startGateway(auth(`${PASSWORD}-other`))]);
  try {
    const { cookie } = await login(secured);
    assert.equal((await raw(`${replica.url}/api/providers`, { headers: { cookie } })).status, 200, 'the next request may land on another pod');
    assert.equal((await raw(`${other.url}/api/providers`, { headers: { cookie } })).status, 401);
    const ticket = JSON.parse((await raw(`${secured.url}/api/session/ws-ticket`, { method: 'POST', headers: { cookie } })).body.toString()).ticket as string;
    assert.equal(await upgrade(wsUrl(other, `?ticket=${ticket}`)), 401);
    assert.equal(await upgrade(wsUrl(replica, `?ticket=${ticket}`)), 101);
  } finally {
    await Promise.all([replica.stop(), other.stop()]);
  }
});

test('a cookie-authenticated write from another origin, or without a JSON body, is refused and changes nothing', async () => {
  const { cookie } = await login(secured);
  const team = JSON.stringify({ name: 'csrf-team' });
  const cross = await raw(`${secured.url}/api/governance/teams`, { method: 'POST', headers: { cookie, origin: 'http://evil.example', 'content-type': 'application/json' }, body: team });
  assert.equal(cross.status, 403);
  assert.equal(JSON.parse(cross.body.toString()).error.code, 'origin_not_allowed');
  const form = await raw(`${secured.url}/api/governance/teams`, { method: 'POST', headers: { cookie, 'content-type': 'text/plain' }, body: team });
  assert.equal(form.status, 415);
  const teams = JSON.parse((await raw(`${secured.url}/api/governance/teams`, { headers: { cookie } })).body.toString()) as { teams?: { name: string }[] };
  assert.ok(!JSON.stringify(teams).includes('csrf-team'), 'no team was created');
  // The same write from the dashboard's own origin goes through.
  const same = await raw(`${secured.url}/api/governance/teams`, { method: 'POST', headers: { cookie, origin: secured.url, 'content-type': 'application/json' }, body: team });
  assert.equal(same.status < 300, true, same.body.toString());
});

test('GET /api/dashboard: version, file mode, writable, auth and the subsystems that really run', async () => {
  const info = JSON.parse((await raw(`${open.url}/api/dashboard`)).body.toString());
  assert.match(info.version, /^\d+\.\d+\.\d+/);
  assert.equal(info.mode, 'file');
  assert.equal(info.read_only, false);
  assert.equal(info.read_only_reason, undefined);
  assert.equal(info.auth_enabled, false);
  // A SQLite logs store: logs, webhooks, async jobs and the skills repository run; no vector store, no MCP client.
  assert.deepEqual(info.features, { logs: true, cache: false, mcp: true, webhooks: true, async: true, skills: true, audit: true });
  const { cookie } = await login(secured);
  assert.equal((await raw(`${secured.url}/api/dashboard`)).status, 401);
  assert.equal(JSON.parse((await raw(`${secured.url}/api/dashboard`, { headers: { cookie } })).body.toString()).auth_enabled, true);
});

test('the info builder in Kubernetes mode: read-only, naming what to edit', () => {
  const info = gatewayInfo({ version: '1.2.3', origin: kubeOrigin(undefined), authEnabled: true, features: { logs: true, cache: false, mcp: true, webhooks: false, async: false, skills: false, audit: false } });
  assert.equal(info.mode, 'kubernetes');
  assert.equal(info.read_only, true);
  assert.match(info.read_only_reason ?? '', /custom resources \(gateway\.skybridge\.dev\) with kubectl/);
});

test('ws-ticket: 403 with auth off; with auth a 30 s ticket that opens /ws once', async () => {
  const off = await raw(`${open.url}/api/session/ws-ticket`, { method: 'POST' });
  assert.equal(off.status, 403);
  assert.equal(JSON.parse(off.body.toString()).error.code, 'auth_not_enabled');

  assert.equal((await raw(`${secured.url}/api/session/ws-ticket`, { method: 'POST' })).status, 401);
  const { cookie } = await login(secured);
  const issued = await raw(`${secured.url}/api/session/ws-ticket`, { method: 'POST', headers: { cookie } });
  assert.equal(issued.status, 200);
  const { ticket, expires_at } = JSON.parse(issued.body.toString()) as { ticket: string; expires_at: string };
  assert.match(ticket, /^[A-Za-z0-9_.-]{40,}$/);
  const ttl = Date.parse(expires_at) - Date.now();
  assert.ok(ttl > 25_000 && ttl <= 30_000, `expires in ${ttl} ms`);

  assert.equal(await upgrade(wsUrl(secured)), 401, 'no ticket');
  assert.equal(await upgrade(wsUrl(secured, '?ticket=made-up')), 401, 'unknown ticket');
  assert.equal(await upgrade(wsUrl(secured, `?ticket=${ticket}`)), 101);
  assert.equal(await upgrade(wsUrl(secured, `?ticket=${ticket}`)), 401, 'a ticket opens one socket');
  // A cross-site page cannot use a ticket either (it is refused before the ticket is spent).
  const second = JSON.parse((await raw(`${secured.url}/api/session/ws-ticket`, { method: 'POST', headers: { cookie } })).body.toString()).ticket as string;
  assert.equal(await upgrade(wsUrl(secured, `?ticket=${second}`), { origin: 'http://evil.example' }), 403);
  assert.equal(await upgrade(wsUrl(secured, `?ticket=${second}`), { origin: secured.url }), 101);
});

test('tickets expire after 30 s, open one socket, and are signed: another replica with the same configuration accepts them', () => {
  const key = () => Buffer.alloc(32, 3);
  const store = new TicketStore(key);
  const t0 = 1_000_000;
  const a = store.issue(t0)!;
  assert.equal(a.expiresAt, t0 + 30_000);
  assert.equal(store.consume(a.ticket, t0 + 30_000), false, 'expired at 30 s');
  const b = store.issue(t0)!;
  assert.equal(store.consume(b.ticket, t0 + 29_999), true);
  assert.equal(store.consume(b.ticket, t0 + 29_999), false, 'spent');
  const c = store.issue(t0)!;
  assert.equal(new TicketStore(key).consume(c.ticket, t0 + 1), true, 'another replica');
  assert.equal(new TicketStore(() => Buffer.alloc(32, 4)).consume(store.issue(t0)!.ticket, t0 + 1), false, 'another key');
  assert.equal(store.size, 1, 'only spent tickets are kept, until they expire');
});

test('/ws with auth off: loopback without a ticket; a remote client or a rebinding Host gets 401, a cross-site Origin 403', async (t) => {
  assert.equal(await upgrade(wsUrl(open)), 101);
  assert.equal(await upgrade(wsUrl(open), { host: 'attacker.example' }), 401);
  assert.equal(await upgrade(wsUrl(open), { origin: 'http://evil.example' }), 403);
  // Another Upgrade on another path is a plain request to the route table.
  assert.equal(await upgrade(`${open.url}/health`), 200);
  const ip = externalIpv4();
  if (!ip) return t.diagnostic('no non-loopback IPv4 address: remote half skipped');
  assert.equal(await upgrade(`ws://${ip}:${open.port}/ws`), 401);
});

test('live: a log event per stored request log (the /api/logs item), request_error after an upstream 500, budget_threshold at 80 % and 100 %', async () => {
  const socket = await live(wsUrl(open));
  try {
    const ok = await chat(open);
    assert.equal(ok.status, 200);
    const id = ok.headers.get('x-request-id');
    let event: Record<string, unknown> | undefined;
    await eventually(() => {
      event = socket.messages.find((m) => m.type === 'log');
      assert.ok(event, 'a log event arrived');
    }, 5000);
    const data = event!.data as Record<string, unknown>;
    assert.equal(data.status, 'success');
    assert.equal(data.model, 'gpt-4o');
    assert.ok(id, 'every answer names its request id');
    assert.equal(data.request_id, id);
    // The same object GET /api/logs lists (created_at is when each was written).
    const listed = JSON.parse((await raw(`${open.url}/api/logs?limit=50`)).body.toString()) as { logs: Record<string, unknown>[] };
    const item = listed.logs.find((l) => l.id === data.id);
    assert.ok(item, 'the logged request is listed');
    assert.deepEqual({ ...data, created_at: undefined }, { ...item, created_at: undefined });

    mock.inject({ format: 'openai', status: 500 });
    const failed = await chat(open);
    assert.ok(failed.status >= 500, `status ${failed.status}`);
    let note: Record<string, unknown> | undefined;
    await eventually(() => {
      note = socket.messages.find((m) => m.type === 'notification' && m.kind === 'request_error');
      assert.ok(note, 'a request_error notification arrived');
    }, 5000);
    assert.equal(typeof note!.message, 'string');
    assert.ok(!Number.isNaN(Date.parse(String(note!.at))));
    const noteData = note!.data as Record<string, unknown>;
    assert.ok(typeof noteData.status === 'number' && noteData.status >= 500);
    assert.ok(socket.messages.some((m) => m.type === 'log' && (m.data as { id: string }).id === noteData.log_id && (m.data as { status: string }).status === 'error'));

    // A 4xx (the caller's mistake) is logged but is not a notification.
    const before = socket.messages.filter((m) => m.kind === 'request_error').length;
    const bad = await fetch(`${open.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"openai/gpt-4o"}' });
    assert.equal(bad.status, 400);
    // Past the writer's flush (200 ms): had it been a notification, it would have arrived.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(socket.messages.filter((m) => m.kind === 'request_error').length, before);

    const spend = await chat(open, { 'x-bf-vk': VK });
    assert.equal(spend.status, 200, await spend.clone().text());
    await eventually(() => {
      const budget = socket.messages.filter((m) => m.kind === 'budget_threshold').map((m) => m.data as { budget_id: string; threshold_percent: number });
      assert.deepEqual(budget.map((b) => [b.budget_id, b.threshold_percent]), [
        ['dash-budget', 80],
        ['dash-budget', 100],
      ]);
    }, 5000);
  } finally {
    socket.close();
  }
});

test('live: garbage frames end only that socket; the gateway and other sockets carry on', async () => {
  const watcher = await live(wsUrl(open));
  try {
    for (const garbage of [
      Buffer.from([0x81, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f]), // unmasked client frame
      Buffer.from([0x8f, 0x80, 1, 2, 3, 4]), // reserved opcode
      Buffer.from([0x82, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), // absurd 64-bit length
      randomBytes(300),
    ]) {
      const closed = await new Promise<string>((resolve, reject) => {
        const s = netConnect(open.port, '127.0.0.1');
        let text = '';
        s.on('error', () => resolve(text));
        s.setTimeout(3000, () => reject(new Error('the socket was not closed')));
        s.on('data', (d: Buffer) => {
          text += d.toString('latin1');
          if (text.includes('\r\n\r\n') && !text.includes('garbage sent')) {
            text += 'garbage sent';
            s.write(garbage);
          }
        });
        s.on('close', () => resolve(text));
        s.write(`GET /ws HTTP/1.1\r\nhost: 127.0.0.1:${open.port}\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: ${randomBytes(16).toString('base64')}\r\n\r\n`);
      });
      assert.match(closed, /^HTTP\/1\.1 101 /);
    }
    // An oversized message from a real client is refused with 1009 and the socket closed.
    const big = await live(wsUrl(open));
    const code = await new Promise<number>((resolve) => {
      big.ws.addEventListener('close', (e) => resolve(e.code), { once: true });
      big.ws.send('x'.repeat(100_000));
    });
    assert.equal(code, 1009);
    assert.equal((await fetch(`${open.url}/health`)).status, 200);
    assert.equal(open.process.exitCode, null);
    const seen = watcher.messages.length;
    assert.equal((await chat(open)).status, 200);
    await eventually(() => assert.ok(watcher.messages.slice(seen).some((m) => m.type === 'log')), 5000);
    assert.doesNotMatch(open.logs(), /uncaught exception|unhandled promise rejection|unhandled error in handler/);
  } finally {
    watcher.close();
  }
});

test('shutdown: an open dashboard socket is closed with 1001 and does not hold the drain open', async () => {
  const g = await startGateway({}, { args: ['--shutdown-grace', '30'], env: { SKYBRIDGE_DASHBOARD_DIR: dist } });
  try {
    const socket = await live(wsUrl(g));
    const closed = new Promise<number>((resolve) => socket.ws.addEventListener('close', (e) => resolve(e.code), { once: true }));
    const started = Date.now();
    const exited = new Promise<void>((resolve) => g.process.once('exit', () => resolve()));
    g.process.kill('SIGTERM');
    assert.equal(await closed, 1001);
    await exited;
    assert.ok(Date.now() - started < 10_000, `exited after ${Date.now() - started} ms (grace 30 s)`);
  } finally {
    await g.stop();
  }
});

test('--no-dashboard: / is a 404 again and /ws is not served', async () => {
  const off = await startGateway({}, { args: ['--no-dashboard'], env: { SKYBRIDGE_DASHBOARD_DIR: dist } });
  try {
    assert.equal((await raw(`${off.url}/`)).status, 404);
    assert.equal((await raw(`${off.url}/assets/app-T3ST.js`)).status, 404);
    assert.equal(await upgrade(wsUrl(off)), 404);
  } finally {
    await off.stop();
  }
});
