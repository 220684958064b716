// stdio MCP servers as the gateway starts them: a connect timeout that can wait for a server fetched
// on first use, the gateway's CA and proxy variables passed to the child by default, and the tail
// of a dead child's stderr in its error reason. Real stdio servers built with the official SDK.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;

let mock: MockProvider | undefined;
const gateways: InProcessGateway[] = [];

before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await mock?.close();
});

const stdio = (name: string, args: string[], more: Record<string, unknown> = {}) => ({
  name,
  connection_type: 'stdio',
  stdio_config: { command: process.execPath, args: [STDIO_SERVER, ...args] },
  tools_to_execute: ['*'],
  allow_without_virtual_key: true,
  ...more,
});

interface ClientView {
  config: { name: string };
  state: string;
  error?: string;
  connecting?: boolean;
}

async function gateway(clients: unknown[], env: NodeJS.ProcessEnv = {}): Promise<{ g: InProcessGateway; by: Record<string, ClientView> }> {
  const g = await startGateway({ providers: mockProviders(mock!.url), mcp: { client_configs: clients } }, { env });
  gateways.push(g);
  let list: ClientView[] = [];
  await eventually(async () => {
    list = (await apiClient(g)<ClientView[]>('GET', '/api/mcp/clients')).body;
    assert.ok(list.length === clients.length && list.every((c) => !c.connecting && c.state !== 'connecting'), JSON.stringify(list));
  }, 60_000);
  return { g, by: Object.fromEntries(list.map((c) => [c.config.name, c])) };
}

test('connect_timeout: a slow-starting server connects when allowed to, and fails naming the timeout when not', async () => {
  const { by } = await gateway([stdio('patient', ['slow-start', '3000'], { connect_timeout: 60 }), stdio('hasty', ['slow-start', '3000'], { connect_timeout: 1 })]);
  assert.equal(by.patient.state, 'connected', by.patient.error);
  assert.equal(by.hasty.state, 'error');
  assert.match(by.hasty.error ?? '', /timed out|timeout/i);
});

test('connect_timeout out of range is refused at /api, naming the field', async () => {
  const { g } = await gateway([]);
  const res = await apiClient(g)<{ error: { param?: string; message: string } }>('POST', '/api/mcp/client', stdio('bad', ['basic'], { connect_timeout: 0 }));
  assert.equal(res.status, 400, res.text);
  assert.match(JSON.stringify(res.body.error), /connect_timeout/);
});

test('the child gets the gateway’s CA and proxy variables by default, and nothing else unnamed', async () => {
  const env = { SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt', HTTPS_PROXY: 'http://proxy.invalid:3128', NO_PROXY: '127.0.0.1,localhost', UNRELATED_SECRET: 'keep-me-home' };
  const { g, by } = await gateway([stdio('net', ['basic']), stdio('opted_out', ['basic'], { stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'], envs: ['HTTPS_PROXY='] } })], env);
  assert.equal(by.net.state, 'connected', by.net.error);
  const read = async (client: string, name: string) => {
    const res = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: `${client}-env`, arguments: JSON.stringify({ query: name }) } }) });
    assert.equal(res.status, 200);
    return ((await res.json()) as { content: string }).content;
  };
  assert.equal(await read('net', 'SSL_CERT_FILE'), env.SSL_CERT_FILE);
  assert.equal(await read('net', 'HTTPS_PROXY'), env.HTTPS_PROXY);
  assert.equal(await read('net', 'NO_PROXY'), env.NO_PROXY);
  assert.equal(await read('net', 'UNRELATED_SECRET'), 'unset');
  // envs still wins: a client can turn a default off.
  assert.equal(await read('opted_out', 'HTTPS_PROXY'), '');
});

test('a stdio server that dies at start is in error with the tail of its stderr', async () => {
  const { by } = await gateway([stdio('dead1', ['crash']), stdio('dead2', ['crash']), stdio('dead3', ['crash'])]);
  for (const name of ['dead1', 'dead2', 'dead3']) {
    assert.equal(by[name].state, 'error');
    assert.match(by[name].error ?? '', /stderr: test server: cannot start on purpose/, by[name].error);
  }
});

test('a stdio server that dies after connecting is in error with the tail of its stderr', async () => {
  const { g, by } = await gateway([stdio('mortal', ['basic'])]);
  assert.equal(by.mortal.state, 'connected', by.mortal.error);
  const res = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'mortal-exit', arguments: '{}' } }) });
  assert.equal(res.status, 200);
  let view: ClientView | undefined;
  await eventually(async () => {
    view = (await apiClient(g)<ClientView[]>('GET', '/api/mcp/clients')).body[0];
    assert.equal(view?.state, 'error');
  }, 10_000);
  assert.match(view!.error ?? '', /closed.*stderr: test server: exiting on request/, view!.error);
});

test('a failed server keeps reporting its failure while the gateway retries it, never "connecting"', async () => {
  const { g, by } = await gateway([stdio('flaky', ['crash'])]);
  assert.equal(by.flaky.state, 'error');
  // Retries start 1 s after a failure and back off from there: sample across at least one of them.
  const seen = new Set<string>();
  const until = Date.now() + 3_500;
  while (Date.now() < until) {
    const view = (await apiClient(g)<ClientView[]>('GET', '/api/mcp/clients')).body[0]!;
    seen.add(`${view.state}${view.connecting ? ' (connecting)' : ''}: ${view.error ?? ''}`.replace(/\s+\(stderr.*$/, ''));
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual([...seen].map((s) => s.split(':')[0]), ['error'], [...seen].join('\n'));
});
