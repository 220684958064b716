// The Webhooks and MCP pages of the dashboard in a real Chromium against a running gateway:
// a webhook endpoint created in the browser delivers signed test deliveries to a real HTTP receiver
// (verified with standardwebhooks), its secret is shown once, the history shows the attempts, a
// redelivery arrives again with the same webhook-id, and rotation shows a new secret that signs from
// then on. MCP: a client added in the browser connects to a real MCP server and lists its tools,
// reconnects, shows the error state with its reason when the server is gone and recovers, and its
// tool calls appear in the MCP logs. In Kubernetes mode both pages are read-only with a banner naming
// the custom resource kind, while test deliveries, redeliveries and reconnects still work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openDashboard, type OpenDashboard } from '../helpers/browser.ts';
import { openKubeDashboard } from '../helpers/browser-kube.ts';
import { eventually } from '../helpers/patience.ts';
import { startKubeApiServer } from '../helpers/kube.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';

let receiver: Receiver;
const open: OpenDashboard[] = [];
const servers: TestMcpServer[] = [];

before(async () => {
  receiver = await startReceiver();
});
after(async () => {
  await Promise.all(open.map((d) => d.close()));
  await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
  await receiver.close();
});

async function dashboard(config: Record<string, unknown>, login?: { username: string; password: string }, path?: string): Promise<OpenDashboard> {
  const d = await openDashboard({ config, ...(login && { login }), ...(path && { path }) });
  open.push(d);
  return d;
}

async function shownOnce(page: Page): Promise<string> {
  const secret = (await page.getByTestId('shown-once').textContent())?.trim() ?? '';
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
  return secret;
}

const deliveryRow = (page: Page, id: string) => page.locator(`tr[data-delivery="${id}"]`);

test('webhooks: create (secret once), test delivery signed and in the history, redeliver, rotate, disable, delete', async () => {
  // A private-network receiver may only get test deliveries when dashboard authentication is on.
  const d = await dashboard({ client: { enable_logging: true }, governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } } }, { username: ADMIN, password: PASSWORD }, '#/webhooks');
  const { page } = d;
  const endpoints = page.getByRole('table', { name: 'Webhook endpoints' });
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  await page.getByText('No webhook endpoint yet.').waitFor();

  // Create: the form refuses an empty URL before asking the gateway, then the gateway's own rule
  // (plain http needs allow_private_network) comes back naming the field.
  await page.getByRole('button', { name: 'New endpoint' }).click();
  const dialog = page.getByRole('dialog', { name: 'New webhook endpoint' });
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('orders');
  await dialog.getByRole('button', { name: 'Create endpoint' }).click();
  await dialog.getByText('URL is required.').waitFor();
  await dialog.getByLabel('URL').fill(receiver.url);
  await dialog.getByRole('button', { name: 'Create endpoint' }).click();
  await dialog.getByText('(field: url)').waitFor();
  await dialog.getByLabel('Allow private-network receivers and plain http').check();
  await dialog.getByRole('button', { name: 'Create endpoint' }).click();

  const secret = await shownOnce(page);
  receiver.setSecret(secret);
  await page.getByRole('button', { name: 'Done' }).click();
  await endpoints.getByRole('link', { name: 'orders', exact: true }).waitFor();
  assert.equal(await page.getByTestId('shown-once').count(), 0);
  assert.ok(!(await page.content()).includes(secret), 'the secret is not on the page any more');

  // The endpoint page: a test delivery for a chosen event reaches the receiver, signed.
  await endpoints.getByRole('link', { name: 'orders', exact: true }).click();
  await page.getByRole('heading', { name: 'Webhook orders' }).waitFor();
  assert.ok(!(await page.content()).includes(secret), 'the endpoint page never shows the secret');
  await page.getByLabel('Test event').selectOption('async_job.failed');
  await page.getByRole('button', { name: 'Send test delivery' }).click();
  await eventually(() => assert.equal(receiver.received.length, 1), 15_000);
  const first = receiver.received[0];
  assert.match(String(first.headers['webhook-signature']), /^v1,/);
  assert.equal(first.verified, true, 'signed with the secret shown at creation');
  assert.equal(first.json.event, 'async_job.failed');
  assert.equal(first.json.data.status, 'failed');

  // The history shows it delivered, with the attempt's status code.
  const row = deliveryRow(page, first.id);
  await row.getByText('delivered').waitFor({ timeout: 15_000 });
  await row.getByText('async_job.failed').waitFor();
  await page.getByRole('button', { name: `Attempts of ${first.id}` }).click();
  const attempts = page.getByRole('table', { name: `Attempts of delivery ${first.id}` });
  await attempts.getByRole('cell', { name: '200', exact: true }).waitFor();
  await attempts.getByText('success').waitFor();

  // Redeliver: the same delivery (same webhook-id) arrives a second time.
  await page.getByRole('button', { name: `Redeliver ${first.id}` }).click();
  await page.getByText(`Delivery ${first.id} queued again`).waitFor();
  await eventually(() => assert.equal(receiver.received.length, 2), 15_000);
  assert.equal(receiver.received[1].id, first.id);
  assert.equal(receiver.received[1].verified, true);
  await row.getByText('send 2').waitFor({ timeout: 15_000 });
  await row.getByText('delivered').waitFor({ timeout: 15_000 });

  // Rotate: a new secret shown once; deliveries from then on are signed with it, not the old one.
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await page.getByRole('button', { name: 'Rotate now' }).click();
  const rotated = await shownOnce(page);
  assert.notEqual(rotated, secret);
  await page.getByRole('button', { name: 'Done' }).click();
  assert.equal(await page.getByTestId('shown-once').count(), 0);
  receiver.setSecret(rotated);
  await page.getByLabel('Test event').selectOption('async_job.completed');
  await page.getByRole('button', { name: 'Send test delivery' }).click();
  await eventually(() => assert.equal(receiver.received.length, 3), 15_000);
  const third = receiver.received[2];
  assert.equal(third.json.event, 'async_job.completed');
  assert.equal(third.verified, true);
  assert.equal(receiver.verify(third, secret), false, 'the old secret no longer signs');

  // Disable: shown as disabled, and test deliveries are off until enabled again.
  await page.getByRole('button', { name: 'Disable' }).click();
  await page.getByRole('button', { name: 'Enable' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Send test delivery' }).isDisabled(), true);
  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByRole('button', { name: 'Disable' }).waitFor();

  // Edit: the name (the id) is read-only; a changed setting is saved.
  await page.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit webhook orders' });
  assert.equal(await edit.getByRole('textbox', { name: /^Name/ }).isDisabled(), true);
  await edit.getByLabel('async_job.failed').uncheck();
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await edit.waitFor({ state: 'detached' });
  await page.locator('dd', { hasText: /^async_job\.completed$/ }).waitFor();

  // The list's filters: the endpoint listens to completed jobs only now.
  await page.getByRole('link', { name: 'Webhooks', exact: true }).first().click();
  await page.getByRole('combobox', { name: /^Event/ }).selectOption('async_job.failed');
  await page.getByText('No endpoint matches these filters.').waitFor();
  await page.getByRole('combobox', { name: /^Event/ }).selectOption('async_job.completed');
  await endpoints.getByRole('link', { name: 'orders', exact: true }).waitFor();

  // Delete, confirmed in a dialog.
  await endpoints.getByRole('link', { name: 'orders', exact: true }).click();
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Delete endpoint' }).click();
  await page.getByText('No webhook endpoint yet.').waitFor();
});

test('mcp: add a client in the browser, see it connected with its tools, reconnect, error state and recovery, tool call logs', async () => {
  const server = await startTestMcpServer();
  servers.push(server);
  const port = Number(new URL(server.httpUrl).port);
  const d = await dashboard({ mcp: { client_configs: [] } }, undefined, '#/mcp');
  const { page } = d;
  await page.getByRole('heading', { name: 'MCP', level: 1 }).waitFor();
  await page.getByText('No MCP client configured.').waitFor();

  await page.getByRole('button', { name: 'Add client' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add MCP client' });
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('web');
  await dialog.getByLabel('Connection type').selectOption('http');
  await dialog.getByLabel('Server URL').fill(server.httpUrl);
  // This gateway has no virtual keys: the tools are offered to anonymous callers only when asked.
  await dialog.getByLabel('Offer to callers without a virtual key').check();
  await dialog.getByRole('button', { name: 'Add client' }).click();
  await dialog.waitFor({ state: 'detached' });

  const row = page.getByRole('row', { name: /web/ });
  await row.getByTestId('mcp-state').getByText('connected').waitFor();
  await page.getByRole('link', { name: 'web', exact: true }).click();
  await page.getByRole('heading', { name: 'MCP client web' }).waitFor();
  const tools = page.getByRole('list', { name: 'Tools of web' });
  for (const name of ['echo', 'add', 'slow']) await tools.getByText(name, { exact: true }).waitFor();

  // Reconnect: connected again, with the tools.
  await page.getByRole('button', { name: 'Reconnect web' }).click();
  await page.getByText('MCP client reconnected successfully').waitFor();
  await page.getByTestId('mcp-state').getByText('connected').waitFor();
  await tools.getByText('echo', { exact: true }).waitFor();

  // The server goes away: reconnecting fails with the reason, and the state is an error.
  await server.close();
  await page.getByRole('button', { name: 'Reconnect web' }).click();
  await page.getByText(/MCP client reconnect failed/).waitFor();
  await page.getByTestId('mcp-state').getByText('error').waitFor();
  await page.getByText('No tools while the client is not connected.').waitFor();

  // Back on the same port: reconnect brings it back.
  servers.push(await startTestMcpServer({ port }));
  await page.getByRole('button', { name: 'Reconnect web' }).click();
  await page.getByText('MCP client reconnected successfully').waitFor();
  await page.getByTestId('mcp-state').getByText('connected').waitFor();

  // A tool call made through the gateway appears in the MCP logs, with its arguments.
  const exec = await fetch(`${d.gw.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'call_1', type: 'function', function: { name: 'web-echo', arguments: '{"query":"hello from the browser test"}' } }),
  });
  assert.equal(exec.status, 200, await exec.text());
  await page.getByRole('link', { name: 'MCP', exact: true }).first().click();
  await page.getByRole('heading', { name: 'Tool calls' }).waitFor();
  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.getByLabel('Content contains').fill('hello from the browser');
  const call = page.getByRole('row', { name: /echo/ });
  await call.getByText('success').waitFor();
  await call.getByRole('button', { name: /Details of the echo call/ }).click();
  await page.getByText('"query": "hello from the browser test"').waitFor();
  await page.getByLabel('Content contains').fill('nothing like this was ever sent');
  await page.getByText('No tool call matches these filters.').waitFor();

  // The overview counts the call too: its MCP tool calls total and the by-tool table.
  await page.goto(`${d.gw.url}/#/overview`);
  const byTool = page.getByRole('table', { name: 'MCP tool calls by tool' }).getByRole('row').filter({ hasText: 'echo' });
  await eventually(async () => {
    await page.reload();
    await byTool.waitFor({ timeout: 3000 });
    assert.match(await byTool.innerText(), /echo\s+1\s+0/);
  });
  assert.match(await page.getByLabel('Totals, last hour').locator('.stat').filter({ hasText: 'MCP tool calls' }).innerText(), /MCP tool calls\s+1\b/);
  await page.goto(`${d.gw.url}/#/mcp`);

  // Edit (the form starts from the stored client), then delete.
  await page.getByRole('table', { name: 'MCP clients' }).getByRole('link', { name: 'web', exact: true }).click();
  await page.getByRole('button', { name: 'Edit', exact: true }).click();
  const edit = page.getByRole('dialog', { name: 'Edit MCP client web' });
  assert.equal(await edit.getByLabel('Server URL').inputValue(), server.httpUrl);
  await edit.getByRole('textbox', { name: /^Tools to execute/ }).fill('echo, add');
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await edit.waitFor({ state: 'detached' });
  await page.locator('dd', { hasText: /^echo, add$/ }).waitFor();
  await page.getByTestId('mcp-state').getByText('connected').waitFor();
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByRole('button', { name: 'Delete client' }).click();
  await page.getByText('No MCP client configured.').waitFor();
});

test('webhooks without dashboard authentication: a test delivery to a private-network receiver is refused with the reason', async () => {
  const d = await dashboard({ client: { enable_logging: true }, webhooks: [{ name: 'local', url: receiver.url, events: ['async_job.completed'], allow_private_network: true }] }, undefined, '#/webhooks/local');
  const before = receiver.received.length;
  await d.page.getByRole('heading', { name: 'Webhook local' }).waitFor();
  await d.page.getByRole('button', { name: 'Send test delivery' }).click();
  await d.page.getByText(/need dashboard authentication/).waitFor();
  await d.page.getByText('No deliveries match.').waitFor();
  assert.equal(receiver.received.length, before);
});

test('kubernetes mode: read-only banners name Webhook and MCPClient; test delivery, redeliver and reconnect still work', { timeout: 900_000 }, async (t) => {
  const NS = 'skybridge';
  const SECRET_VAR = 'WEBHOOK_TEAM_A_CR_HOOK_SECRET';
  const SECRET = 'whsec_Y3Itd2ViaG9vay1zZWNyZXQtZnJvbS1rdWJl';
  const [kube, server, hooks] = await Promise.all([startKubeApiServer(), startTestMcpServer(), startReceiver()]);
  t.after(() => Promise.all([kube.stop(), server.close(), hooks.close()]));
  hooks.setSecret(SECRET);
  const document = {
    client: { enable_logging: true },
    governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: 'env.ADMIN_PASSWORD' } },
    webhooks: [{ name: 'cr-hook', url: hooks.url, events: ['async_job.completed'], secret: `env.${SECRET_VAR}`, allow_private_network: true }],
    mcp: { client_configs: [{ client_id: 'web', name: 'web', connection_type: 'http', connection_string: server.httpUrl, tools_to_execute: ['*'] }] },
  };
  const { gw, page, close } = await openKubeDashboard(kube, {
    namespace: NS,
    document,
    secrets: { [SECRET_VAR]: SECRET, ADMIN_PASSWORD: PASSWORD },
    managed: { webhooks: ['cr-hook'], mcp_clients: ['web'] },
    sources: { 'webhooks/cr-hook': 'Webhook team-a/cr-hook', 'mcp_clients/web': `MCPClient ${NS}/web` },
    path: '#/webhooks',
    login: { username: ADMIN, password: PASSWORD },
  });
  t.after(close);

  // Webhooks: the banner names the kind to edit; every configuration write is disabled.
  await page.getByText('Edit the Webhook custom resources instead.').waitFor();
  assert.equal(await page.getByRole('button', { name: 'New endpoint' }).isDisabled(), true);
  await page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('link', { name: 'cr-hook', exact: true }).click();
  await page.getByRole('heading', { name: 'Webhook cr-hook' }).waitFor();
  await page.getByText('Webhook team-a/cr-hook').waitFor();
  for (const name of ['Edit', 'Disable', 'Rotate secret', 'Delete']) assert.equal(await page.getByRole('button', { name, exact: true }).isDisabled(), true, name);

  // A test delivery and a redelivery change no configuration: they work, signed with the Secret's value.
  await page.getByRole('button', { name: 'Send test delivery' }).click();
  await eventually(() => assert.equal(hooks.received.length, 1), 15_000);
  const first = hooks.received[0];
  assert.equal(first.verified, true);
  await deliveryRow(page, first.id).getByText('delivered').waitFor({ timeout: 15_000 });
  await page.getByRole('button', { name: `Redeliver ${first.id}` }).click();
  await eventually(() => assert.equal(hooks.received.length, 2), 15_000);
  assert.equal(hooks.received[1].id, first.id);

  // MCP: the banner names MCPClient; adding, editing and deleting are disabled, reconnecting is not.
  await page.goto(`${gw.url}/#/mcp`);
  await page.getByText('Edit the MCPClient custom resources instead.').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Add client' }).isDisabled(), true);
  await page.getByRole('link', { name: 'web', exact: true }).click();
  await page.getByRole('heading', { name: 'MCP client web' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Edit', exact: true }).isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Delete', exact: true }).isDisabled(), true);
  await page.getByRole('button', { name: 'Reconnect web' }).click();
  await page.getByText('MCP client reconnected successfully').waitFor();
  await page.getByTestId('mcp-state').getByText('connected').waitFor();
});
