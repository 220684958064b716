// Credentials in MCP client URLs never leave the gateway in full. Token-like query parameters are
// masked in every /api answer, kept on a round trip of a masked answer, and absent from error reasons
// and log lines (a real MCP server, official SDK, behind a URL with a token). Userinfo
// (user:password@host) is refused where a client is configured: fetch never connects with it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { runGatewayExpectingExit, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';

let mock: MockProvider | undefined;
let server: TestMcpServer | undefined;
let g: RunningGateway | undefined;

const TOKEN = 'tok-secret-0123456789';
const PASSWORD = 'pa55-secret-9876543210';

before(async () => {
  mock = await startMockProvider();
  server = await startTestMcpServer();
  g = await startGateway({
    providers: mockProviders(mock.url),
    mcp: {
      client_configs: [{ name: 'down', connection_type: 'http', connection_string: `http://127.0.0.1:9/mcp?token=${TOKEN}`, tools_to_execute: ['*'] }],
    },
  });
  // Made through /api, where the test edits it later (config.json's clients are read-only there).
  const created = await apiClient(g)('POST', '/api/mcp/client', { name: 'tokened', connection_type: 'http', connection_string: `${server.httpUrl}?access_token=${TOKEN}&region=eu`, tools_to_execute: ['*'] });
  assert.equal(created.status, 200, created.text.replaceAll(TOKEN, '<token>'));
});
after(async () => {
  await g?.stop();
  await server?.close();
  await mock?.close();
});

interface ClientView {
  config: { name: string; connection_string: string };
  state: string;
  error?: string;
  connecting?: boolean;
}

test('URL credentials are masked in /api answers, errors and logs, and kept when a masked answer is sent back', async () => {
  const api = apiClient(g!);
  let list: ClientView[] = [];
  await eventually(async () => {
    list = (await api<ClientView[]>('GET', '/api/mcp/clients')).body;
    assert.ok(list.length === 2 && list.every((c) => !c.connecting && c.state !== 'disconnected'), JSON.stringify(list));
  }, 30_000);
  const by = Object.fromEntries(list.map((c) => [c.config.name, c]));
  assert.equal(by.tokened.state, 'connected', by.tokened.error);
  assert.ok(server!.seen.some((s) => s.query.includes(TOKEN)), 'the token reached the server');
  assert.equal(by.tokened.config.connection_string, `${server!.httpUrl}?access_token=***&region=eu`);
  assert.equal(by.down.config.connection_string, 'http://127.0.0.1:9/mcp?token=***');
  assert.equal(by.down.state, 'error');
  assert.ok(by.down.error && by.down.error.length > 0);

  const answers = [
    (await api('GET', '/api/mcp/clients')).text,
    (await api('GET', '/api/mcp/client/tokened')).text,
    (await api('GET', '/api/mcp/client/down')).text,
    (await api('GET', '/api/config')).text,
    (await api('POST', '/api/mcp/client/down/reconnect')).text,
  ];
  for (const text of answers) {
    assert.ok(!text.includes(TOKEN), `token in ${text.slice(0, 300)}`);
    assert.ok(!text.includes(PASSWORD), `password in ${text.slice(0, 300)}`);
  }
  // Sending the masked answer back (with another change) keeps the stored URL: the client still
  // reaches the server with its token.
  const before = server!.seen.length;
  const put = await api('PUT', '/api/mcp/client/tokened', { ...by.tokened.config, tools_to_execute: ['echo'] });
  assert.equal(put.status, 200, put.text);
  assert.ok(!put.text.includes(TOKEN));
  await api('POST', '/api/mcp/client/tokened/reconnect');
  await eventually(() => assert.ok(server!.seen.slice(before).some((s) => s.query.includes(TOKEN)), 'reconnected with the stored token'), 10_000);
  assert.ok(!server!.seen.slice(before).some((s) => s.query.includes('***')), 'the masked value was never used');

  const logs = g!.logs();
  assert.ok(!logs.includes(TOKEN), 'no token in the logs');
  assert.ok(!logs.includes(PASSWORD), 'no password in the logs');
});

test('a URL with user:password is refused through /api (400 naming the field) and in config.json, and its password shows nowhere', async () => {
  const api = apiClient(g!);
  const url = `http://admin:${PASSWORD}@127.0.0.1:${new URL(server!.httpUrl).port}/mcp`;
  const refused = await api<{ error: { message: string; field?: string } }>('POST', '/api/mcp/client', { name: 'userinfo', connection_type: 'http', connection_string: url, tools_to_execute: ['*'] });
  assert.equal(refused.status, 400, refused.text.replaceAll(PASSWORD, '<password>'));
  assert.match(refused.text, /connection_string/);
  assert.match(refused.text, /must not carry credentials/);
  assert.ok(!refused.text.includes(PASSWORD), 'no password in the error');
  const list = await api<ClientView[]>('GET', '/api/mcp/clients');
  assert.ok(!list.body.some((c) => c.config.name === 'userinfo'), 'nothing stored');

  const exit = await runGatewayExpectingExit({
    providers: mockProviders(mock!.url),
    mcp: { client_configs: [{ name: 'userinfo', connection_type: 'http', http_config: { url }, tools_to_execute: ['*'] }] },
  });
  assert.notEqual(exit.code, 0, exit.output.replaceAll(PASSWORD, '<password>'));
  assert.match(exit.output, /mcp\.client_configs\[0\]\.http_config\.url/);
  assert.ok(!exit.output.includes(PASSWORD), 'no password in the output');
  assert.ok(!g!.logs().includes(PASSWORD), 'no password in the logs');
});
