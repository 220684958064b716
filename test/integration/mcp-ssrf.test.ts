// Where MCP http/sse clients may connect: loopback and private servers (where MCP servers live) are
// served, link-local, cloud metadata, unspecified and multicast addresses are refused at connect time
// with the reason in the client's state, whether the URL comes from config.json or /api, and no
// request reaches them. Redirects are re-checked hop by hop.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';

let mock: MockProvider;
let server: TestMcpServer;
/** Reached only through a refused address: must never see a request. */
let hidden: TestMcpServer;
let redirector: Server;
let redirectorUrl: string;
const gateways: InProcessGateway[] = [];

before(async () => {
  mock = await startMockProvider();
  server = await startTestMcpServer();
  hidden = await startTestMcpServer();
  const hiddenPort = new URL(hidden.httpUrl).port;
  // A hop to the hidden server through 0.0.0.0 (which reaches 127.0.0.1 on Linux if it were not refused).
  redirector = createServer((_req, res) => void res.writeHead(307, { location: `http://0.0.0.0:${hiddenPort}/mcp` }).end());
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  redirector.closeAllConnections();
  await new Promise<void>((r) => redirector.close(() => r()));
  await server.close();
  await hidden.close();
  await mock.close();
});

interface ClientView {
  config: { name: string };
  state: string;
  error?: string;
  connecting?: boolean;
  tools: unknown[];
}

async function settled(g: InProcessGateway, n: number): Promise<Record<string, ClientView>> {
  let list: ClientView[] = [];
  await eventually(async () => {
    const res = await apiClient(g)<ClientView[]>('GET', '/api/mcp/clients');
    list = res.body;
    assert.equal(list.length, n);
    assert.ok(list.every((c) => !c.connecting), JSON.stringify(list.map((c) => [c.config.name, c.state])));
  }, 30_000);
  return Object.fromEntries(list.map((c) => [c.config.name, c]));
}

const http = (name: string, url: string, more: Record<string, unknown> = {}) => ({ name, connection_type: 'http', connection_string: url, tools_to_execute: ['*'], ...more });

test('loopback servers connect; link-local, metadata, unspecified and multicast addresses are refused with the reason', async () => {
  const hiddenPort = new URL(hidden.httpUrl).port;
  const g = await startGateway({
    providers: mockProviders(mock.url),
    mcp: {
      client_configs: [
        http('local', server.httpUrl),
        { name: 'local_sse', connection_type: 'sse', connection_string: server.sseUrl, tools_to_execute: ['*'] },
        http('imds', 'http://169.254.169.254/mcp'),
        http('imds_v6', 'http://[fd00:ec2::254]/mcp'),
        http('imds_mapped', 'http://[::ffff:169.254.169.254]/latest'),
        http('gce', 'http://metadata.google.internal/computeMetadata/v1/'),
        http('linklocal_v6', 'http://[fe80::1]:8080/mcp'),
        http('unspecified', `http://0.0.0.0:${hiddenPort}/mcp`),
        { name: 'unspecified_sse', connection_type: 'sse', connection_string: `http://0.0.0.0:${hiddenPort}/sse`, tools_to_execute: ['*'] },
        http('multicast', 'http://224.0.0.1/mcp'),
      ],
    },
  });
  gateways.push(g);
  const by = await settled(g, 10);
  assert.equal(by.local.state, 'connected', by.local.error);
  assert.equal(by.local_sse.state, 'connected', by.local_sse.error);
  const reasons: Record<string, RegExp> = {
    imds: /link-local/,
    imds_v6: /metadata/,
    imds_mapped: /link-local/,
    gce: /metadata/,
    linklocal_v6: /link-local/,
    unspecified: /unspecified/,
    unspecified_sse: /unspecified/,
    multicast: /multicast/,
  };
  for (const [name, reason] of Object.entries(reasons)) {
    assert.equal(by[name].state, 'error', name);
    assert.match(by[name].error ?? '', /refusing to connect/, `${name}: ${by[name].error}`);
    assert.match(by[name].error ?? '', reason, `${name}: ${by[name].error}`);
    assert.deepEqual(by[name].tools, []);
  }
  // 0.0.0.0 reaches the server on 127.0.0.1 on Linux: nothing got there.
  assert.deepEqual(hidden.seen, []);
});

test('a URL given through /api is checked the same way; redirects are re-checked and never reach a refused address', async () => {
  const g = await startGateway({ providers: mockProviders(mock.url), mcp: { client_configs: [] } });
  gateways.push(g);
  const api = apiClient(g);
  const created = await api<{ client: ClientView }>('POST', '/api/mcp/client', http('meta', 'http://169.254.169.254/latest/meta-data/'));
  assert.equal(created.status, 200, created.text);
  assert.equal(created.body.client.state, 'error');
  assert.match(created.body.client.error ?? '', /refusing to connect to 169\.254\.169\.254: .*link-local/);
  // A redirect to a refused address is not followed: the hidden server sees nothing.
  assert.equal((await api('POST', '/api/mcp/client', http('bounce', `${redirectorUrl}/to-hidden`))).status, 200);
  const by = await settled(g, 2);
  assert.equal(by.bounce.state, 'error');
  assert.match(by.bounce.error ?? '', /0\.0\.0\.0/);
  assert.deepEqual(hidden.seen, []);
  // The tool listing never starts on a refused client: tool calls answer 503 with the reason.
  const res = await fetch(`${g.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'meta-echo', arguments: '{}' } }),
  });
  assert.ok(res.status >= 400, `status ${res.status}`);
});
