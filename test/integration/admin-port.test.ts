// --admin-port: the management API, /metrics and the dashboard (page, assets, /ws) on a second
// listener of a real gateway process; the inference port then serves inference, /health and /ready
// only, and answers the management paths 404 naming where they went.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { runGatewayExpectingExit, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
let gateway: RunningGateway;
let adminUrl: string;

function writeDashboard(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-dash-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><html><body><div id="app"></div><script type="module" src="/assets/app-A1.js"></script></body></html>');
  writeFileSync(join(dir, 'assets', 'app-A1.js'), 'export const dashboard = true;\n');
  return dir;
}

before(async () => {
  mock = await startMockProvider();
  gateway = await startGateway({ providers: mockProviders(mock.url) }, { env: { SKYBRIDGE_DASHBOARD_DIR: writeDashboard() }, args: ['--admin-port', '0'] });
  const m = /"admin_address":"http:\/\/[^:]+:(\d+)"/.exec(gateway.logs());
  assert.ok(m, `no admin address logged:\n${gateway.logs()}`);
  adminUrl = `http://127.0.0.1:${m[1]}`;
});

after(async () => {
  await gateway?.stop();
  await mock?.close();
});

const chat = (base: string) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10 }),
  });

/** The status of a WebSocket handshake on /ws (101 when it opens). */
function upgrade(base: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL('/ws', base);
    const req = httpRequest(url, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64') } });
    req.once('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.once('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

interface ErrorBody {
  error: { message: string; type: string; code?: string };
}

describe('--admin-port', () => {
  test('the inference port serves inference, /health and /ready', async () => {
    const res = await chat(gateway.url);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { object: string }).object, 'chat.completion');
    assert.equal((await fetch(`${gateway.url}/health`)).status, 200);
    assert.equal((await fetch(`${gateway.url}/ready`)).status, 200);
  });

  test('the inference port answers /api, /metrics, the dashboard and /ws 404, naming the admin port', async () => {
    for (const [method, path] of [['GET', '/api/config'], ['PUT', '/api/config'], ['GET', '/api'], ['GET', '/metrics'], ['GET', '/'], ['GET', '/index.html'], ['GET', '/assets/app-A1.js']]) {
      const res = await fetch(`${gateway.url}${path}`, { method, ...(method === 'PUT' && { headers: { 'content-type': 'application/json' }, body: '{}' }) });
      assert.equal(res.status, 404, `${method} ${path}`);
      const body = (await res.json()) as ErrorBody;
      assert.equal(body.error.code, 'admin_port_only', `${method} ${path}: ${JSON.stringify(body)}`);
      assert.match(body.error.message, /admin port \(--admin-port\)/);
      assert.ok(body.error.message.includes(path), body.error.message);
    }
    const ws = await upgrade(gateway.url);
    assert.equal(ws.status, 404);
    assert.equal((JSON.parse(ws.body) as ErrorBody).error.code, 'admin_port_only');
  });

  test('the admin port serves /api, /metrics (counting the inference port’s requests), the dashboard and /ws', async () => {
    const config = await fetch(`${adminUrl}/api/config`);
    assert.equal(config.status, 200);
    const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
    // The chat request of the first test, made on the other listener of the same process.
    assert.match(metrics, /^skybridge_requests_total\{[^}]*status="200"[^}]*\} [1-9]/m);
    const page = await fetch(`${adminUrl}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="app">/);
    assert.equal((await fetch(`${adminUrl}/assets/app-A1.js`)).status, 200);
    assert.equal((await upgrade(adminUrl)).status, 101);
    assert.equal((await fetch(`${adminUrl}/health`)).status, 200);
    assert.equal((await fetch(`${adminUrl}/ready`)).status, 200);
  });

  test('the admin port does not serve inference', async () => {
    const res = await chat(adminUrl);
    assert.equal(res.status, 404);
    assert.equal(mock.requests.filter((r) => r.format === 'openai').length, 1, 'only the inference port reached the provider');
  });

  test('a bad --admin-port ends the start with a message naming it', async () => {
    const bad = await runGatewayExpectingExit({ providers: {} }, { SKYBRIDGE_ADMIN_PORT: 'nine' });
    assert.equal(bad.code, 2);
    assert.match(bad.output, /--admin-port must be an integer 0-65535, got 'nine'/);
  });
});
