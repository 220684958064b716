// MCPClient custom resources are live: a proxy started with --kube-namespace, on a real
// kube-apiserver, connects the MCP clients the operator renders into `mcp.client_configs` (the
// auth header from the Secret, as the operator's headersFrom renders it), follows edits and
// removals, and keeps /api writes for them refused (409) while reconnect still works.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient, type Api } from '../helpers/api.ts';
import { kubeList, renderConfig, type KubeObject } from '../helpers/kube-render.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';

const NS = 'skybridge';
// The variable the operator names a headersFrom secret by (operator/src/resources/extensions.ts).
const TOKEN_VAR = 'MCPCLIENT_SKYBRIDGE_WEB_HEADER_AUTHORIZATION';

let kube: KubeApiServer;
let http: TestMcpServer;
let proxy: RunningGateway;
let api: Api;

function render(clients: Record<string, unknown>[]): KubeObject[] {
  const doc = { mcp: { client_configs: clients } };
  return renderConfig(doc, { [TOKEN_VAR]: 'Bearer kube-token-456' }, {
    namespace: NS,
    managed: { mcp_clients: clients.map((c) => c.client_id as string) },
    sources: Object.fromEntries(clients.map((c) => [`mcp_clients/${c.client_id as string}`, `MCPClient ${NS}/${c.client_id as string}`])),
  }).all;
}

async function apply(objects: KubeObject[]): Promise<void> {
  const r = await kube.kubectl(['apply', '--server-side', '--field-manager=skybridge-operator', '--force-conflicts', '-f', '-'], kubeList(objects));
  assert.equal(r.code, 0, `kubectl apply failed: ${r.stderr}`);
}

before(
  async () => {
    [kube, http] = await Promise.all([startKubeApiServer(), startTestMcpServer({ token: 'kube-token-456' })]);
    const ns = await kube.kubectl(['create', 'namespace', NS]);
    assert.equal(ns.code, 0, ns.stderr);
    proxy = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig }, args: ['--kube-namespace', NS] });
    api = apiClient(proxy);
  },
  { timeout: 900_000 },
);

after(async () => {
  await proxy?.stop();
  await http?.close();
  await kube?.stop();
});

type View = { config: { client_id: string; headers?: Record<string, string> }; state: string; error?: string; tools: { name: string }[] };

test('an MCPClient rendered by the operator connects with its Secret header, follows edits and removal', { timeout: 60_000 }, async () => {
  // Keyless callers get its tools only when the client says so (this proxy has no virtual keys).
  const web = { client_id: 'web', name: 'web', connection_type: 'http', connection_string: http.httpUrl, auth_type: 'headers', headers: { Authorization: `env.${TOKEN_VAR}` }, tools_to_execute: ['echo'], allow_without_virtual_key: true };
  await apply(render([web]));
  await eventually(async () => {
    const list = (await api<View[]>('GET', '/api/mcp/clients')).body;
    assert.equal(list.length, 1);
    assert.equal(list[0].state, 'connected', list[0].error);
  }, 10_000);
  assert.ok(http.seen.some((s) => s.authorization === 'Bearer kube-token-456'), 'the header value came from the Secret');
  const list = (await api<View[]>('GET', '/api/mcp/clients')).body;
  assert.equal(list[0].config.headers?.Authorization, `env.${TOKEN_VAR}`, 'the reference is shown, never the Secret value');
  // Served in inference: the tool is added to chat requests... and runs.
  const exec = await fetch(`${proxy.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'web-echo', arguments: '{"query":"from kube"}' } }) });
  assert.equal(((await exec.json()) as { content: string }).content, 'echo: from kube');

  // /api writes are refused (Kubernetes owns the document); reconnecting changes no configuration.
  assert.equal((await api('POST', '/api/mcp/client', { name: 'x', connection_type: 'http', connection_string: http.httpUrl })).status, 409);
  const rec = await api('POST', '/api/mcp/client/web/reconnect');
  assert.equal(rec.status, 200, rec.text);

  // An edit of the CR (another tool allowed) and then its removal are followed.
  await apply(render([{ ...web, tools_to_execute: ['echo', 'add'] }]));
  await eventually(async () => {
    const r = await fetch(`${proxy.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'web-add', arguments: '{"a":1,"b":2}' } }) });
    assert.equal(r.status, 200);
  }, 5_000);
  await apply(render([]));
  await eventually(async () => {
    assert.deepEqual((await api<View[]>('GET', '/api/mcp/clients')).body, []);
  }, 5_000);
});
