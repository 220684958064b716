// MCP clients are applied live on every replica: two gateways sharing their configuration through
// Redis; a client added through one replica's /api connects on both and its tools serve on both,
// and removing it removes it everywhere.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';
import { startRedis, type RunningRedis } from '../helpers/redis.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;

let mock: MockProvider;
let redis: RunningRedis;
let a: RunningGateway;
let b: RunningGateway;

before(async () => {
  [mock, redis] = await Promise.all([startMockProvider(), startRedis()]);
  const config = { providers: mockProviders(mock.url), redis: { addr: redis.addr } };
  a = await startGateway(config);
  b = await startGateway(config);
});
after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await redis?.stop();
  await mock?.close();
});

const echo = (g: RunningGateway) =>
  fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'shared-echo', arguments: '{"query":"replica"}' } }) });

test('a client added through one replica connects and serves on every replica', async () => {
  const created = await apiClient(a)('POST', '/api/mcp/client', { name: 'shared', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] }, tools_to_execute: ['echo'], allow_without_virtual_key: true });
  assert.equal(created.status, 200, created.text);
  for (const g of [a, b]) {
    await eventually(async () => {
      const list = (await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients')).body;
      assert.deepEqual(list.map((c) => c.state), ['connected']);
      const res = await echo(g);
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { content: string }).content, 'echo: replica');
    }, 15_000);
  }
  assert.equal((await apiClient(b)('DELETE', '/api/mcp/client/shared')).status, 200);
  for (const g of [a, b]) {
    await eventually(async () => {
      assert.deepEqual((await apiClient(g)('GET', '/api/mcp/clients')).body, []);
      // No client lets callers without a virtual key in any more: refused as on /mcp.
      assert.equal((await echo(g)).status, 401);
    }, 5_000);
  }
});
