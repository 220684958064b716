// The Settings and Realtime sessions pages in Debian's Chromium against real gateways. Settings: each
// client setting with its default, value and owner; a setting of config.json read-only; a refused
// value shown under its field; a saved one applying to the next request and still there after a
// restart. Realtime: a session of the official openai SDK's OpenAIRealtimeWS (wss:, trusting a test
// CA) appears while open, its turn counted live without a reload, and once ended it links to its log
// record; a Responses WebSocket connection of the SDK's ResponsesWS appears alike (transport
// responses_ws), a turn per response, and once ended links its latest response's record.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { ResponsesWS } from 'openai/resources/responses/ws';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openDashboard, type OpenDashboard } from '../helpers/browser.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { startGateway as startInProcess, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually, patience } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { makeTestCa, type TestCa } from '../helpers/test-ca.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

const T = { timeout: 120_000 };

const setting = (page: Page, name: string) => page.locator(`[data-setting="${name}"]`);

describe('settings page', () => {
  let d: OpenDashboard;
  let restarted: RunningGateway | undefined;
  before(async () => {
    d = await openDashboard({ config: (u) => ({ providers: mockProviders(u), client: { allowed_origins: ['https://a.example'] } }), path: '#/settings' });
    // Waits stretch with the machine's load (a restarted child gateway, a save under load).
    d.context.setDefaultTimeout(patience(15_000));
  });
  after(async () => {
    await restarted?.stop();
    await d?.close();
  });

  test('each setting shows its default, value and owner; config.json settings are read-only', T, async () => {
    const { page } = d;
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const logging = setting(page, 'enable_logging');
    await logging.waitFor();
    assert.equal(await logging.getByRole('combobox', { name: 'enable_logging' }).inputValue(), '');
    assert.match(await logging.innerText(), /Default: on\. Now: on \(the default\)\./);
    assert.match(await logging.innerText(), /content/);
    const origins = setting(page, 'allowed_origins');
    assert.equal(await origins.getByRole('textbox').isDisabled(), true);
    assert.match(await origins.innerText(), /Now: https:\/\/a\.example \(set in the configuration file .*config\.json\)/);
    for (const group of ['Request logs', 'Access', 'Limits', 'Async jobs', 'MCP']) await page.getByRole('group', { name: group }).waitFor();
    assert.match(await page.getByTestId('settings-store').innerText(), /survive a restart/);
    assert.equal(await page.getByRole('button', { name: /^Save changes/ }).first().isDisabled(), true, 'nothing changed yet');
  });

  test('a refused value is shown under its field; a saved one applies and survives a restart', T, async () => {
    const { page } = d;
    const body = setting(page, 'max_request_body_size_mb');
    const input = body.getByRole('textbox', { name: 'max_request_body_size_mb' });
    await input.fill('0');
    await page.getByRole('button', { name: 'Save changes (1)' }).click();
    await body.getByRole('alert').filter({ hasText: /must be >= 1/ }).waitFor();
    assert.equal(await input.getAttribute('aria-invalid'), 'true');

    await input.fill('1');
    await page.getByRole('button', { name: 'Save changes (1)' }).click();
    await body.getByText(/Now: 1 \(set here\)/).waitFor();
    // Once the page has read the stored settings back, the confirmation is still in view.
    assert.ok(await page.getByText('Saved 1 setting.').isVisible(), 'the confirmation went with the reload');
    // The next request is held to it: a 1.5 MB prompt is refused.
    const sdk = new OpenAI({ baseURL: `${d.gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    await assert.rejects(sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(1_500_000) }] }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 413);

    // Logging off through the page: the select's own label is the setting's name.
    await setting(page, 'enable_logging').getByRole('combobox').selectOption('off');
    await page.getByRole('button', { name: 'Save changes (1)' }).click();
    await setting(page, 'enable_logging').getByText(/Now: off \(set here\)/).waitFor();

    // The same app dir started again: the page shows both changes.
    const appDir = d.gw.appDir;
    await d.gw.stop();
    restarted = await startGateway(undefined, { appDir, env: process.env.SKYBRIDGE_DASHBOARD_DIR ? { SKYBRIDGE_DASHBOARD_DIR: process.env.SKYBRIDGE_DASHBOARD_DIR } : {} });
    await page.goto(`${restarted.url}/#/settings`);
    await setting(page, 'max_request_body_size_mb').getByText(/Now: 1 \(set here\)/).waitFor();
    assert.equal(await setting(page, 'max_request_body_size_mb').getByRole('textbox').inputValue(), '1');
    await setting(page, 'enable_logging').getByText(/Now: off \(set here\)/).waitFor();
  });
});

describe('realtime sessions page', () => {
  const VK = 'sk-bf-rt-page-0123456789abcd';
  const AGENT_VK = 'sk-bf-rt-page-agent-0123456';
  let ca: TestCa;
  let mock: MockProvider;
  let gw: InProcessGateway;
  let browser: Browser;
  let page: Page;
  before(async () => {
    ca = makeTestCa();
    const files = ca.issue('gateway');
    mock = await startMockProvider();
    // In this process (it serves SKYBRIDGE_DASHBOARD_DIR of this environment when set), over TLS.
    gw = await startInProcess(
      {
        providers: mockProviders(mock.url, { openai: { pricing_overrides: [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }] } }),
        governance: {
          teams: [
            { id: 'voice', name: 'Voice' },
            { id: 'agents', name: 'Agents' },
          ],
          virtual_keys: [
            { id: 'voice-bot', name: 'voice-bot', value: VK, team_id: 'voice', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-realtime'], key_ids: ['*'], weight: 1 }] },
            { id: 'agent-bot', name: 'agent-bot', value: AGENT_VK, team_id: 'agents', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] },
          ],
        },
      },
      { args: ['--tls-cert', files.cert, '--tls-key', files.key] },
    );
    browser = await launchChromium();
    // The browser trusts the gateway's certificate as it would a real one (the test CA is not installed).
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: true });
    context.setDefaultTimeout(patience(15_000));
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await mock?.close();
  });

  test('an SDK session appears, its turn is counted live, and once ended it links to its log record', T, async () => {
    await page.goto(`${gw.url}/#/realtime`);
    await page.getByRole('heading', { level: 1, name: 'Realtime sessions' }).waitFor();
    await page.getByRole('status').filter({ hasText: /^Live$/ }).waitFor();
    const open = page.getByRole('table', { name: 'Open realtime sessions' });
    await open.getByText('No session is open.').waitFor();

    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: VK, maxRetries: 0 });
    const rt = new OpenAIRealtimeWS({ model: 'openai/gpt-realtime', options: { ca: ca.pem } }, client);
    const types: string[] = [];
    let usage: { input_tokens: number; output_tokens: number } | undefined;
    rt.on('event', (e) => {
      types.push(e.type);
      if (e.type === 'response.done') usage = (e as unknown as { response: { usage: typeof usage } }).response.usage;
    });
    rt.on('error', () => undefined);
    await new Promise((resolve, reject) => (rt.socket.once('open', resolve), rt.socket.once('error', reject)));
    // No reload: the socket's `opened` event adds the row.
    const row = open.getByRole('row').filter({ hasText: 'voice-bot' });
    await row.waitFor();
    assert.match(await row.innerText(), /voice-bot\s+voice\s+gpt-realtime\s+openai\s+0\s+0\s+\$0\.00\s+websocket/);

    rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello page' }] } });
    rt.send({ type: 'response.create' });
    await eventually(() => assert.ok(types.includes('response.done') && usage));
    // The turn's tokens at a cent each, counted on the page as it was charged.
    const tokens = usage!.input_tokens + usage!.output_tokens;
    const turned = new RegExp(`\\b1\\s+${tokens}\\s+\\$${(tokens * 0.01).toFixed(2).replace('.', '\\.')}\\b`);
    await eventually(async () => assert.match(await row.innerText(), turned));

    const closed = new Promise((resolve) => rt.socket.once('close', resolve));
    rt.close();
    await closed;
    await open.getByText('No session is open.').waitFor();
    const ended = page.getByRole('table', { name: 'Recently ended realtime sessions' }).getByRole('row').filter({ hasText: 'voice-bot' });
    await ended.waitFor();
    assert.match(await ended.innerText(), /client/);
    // Its link opens the session's request log record (written as the session ends).
    await ended.getByRole('link', { name: /log record of the session/ }).click();
    await page.waitForURL(/#\/logs\/[^?]+$/);
    await eventually(async () => {
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Request detail' }).waitFor();
      await page.getByText('realtime', { exact: true }).first().waitFor({ timeout: 2000 });
    });
  });

  test('a Responses WebSocket connection appears, counts its response live, and once ended links its latest record', T, async () => {
    await page.goto(`${gw.url}/#/realtime`);
    await page.getByRole('heading', { level: 1, name: 'Realtime sessions' }).waitFor();
    await page.getByRole('status').filter({ hasText: /^Live$/ }).waitFor();
    const open = page.getByRole('table', { name: 'Open realtime sessions' });
    await open.getByText('No session is open.').waitFor();

    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: AGENT_VK, maxRetries: 0 });
    const rws = new ResponsesWS(client, { ca: ca.pem });
    let tokens: number | undefined;
    rws.on('event', (e) => {
      if (e.type === 'response.completed') tokens = (e as unknown as { response: { usage: { total_tokens: number } } }).response.usage.total_tokens;
    });
    rws.on('error', () => undefined);
    const socket = rws.socket.platformSocket;
    await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
    // No reload: the socket's `opened` event adds the row, before any response (no model yet).
    const row = open.getByRole('row').filter({ hasText: 'agent-bot' });
    await row.waitFor();
    assert.match(await row.innerText(), /agent-bot\s+agents\s+—\s+—\s+0\s+0\s+\$0\.00\s+responses_ws/);

    rws.send({ type: 'response.create', model: 'openai/gpt-4o', input: 'hello page over a socket' });
    await eventually(() => assert.ok(tokens));
    const turned = new RegExp(`gpt-4o\\s+openai\\s+1\\s+${tokens}\\s+\\$${(tokens! * 0.01).toFixed(2).replace('.', '\\.')}\\s+responses_ws`);
    await eventually(async () => assert.match(await row.innerText(), turned));

    const closed = new Promise((resolve) => socket.once('close', resolve));
    rws.close();
    await closed;
    await open.getByText('No session is open.').waitFor();
    const ended = page.getByRole('table', { name: 'Recently ended realtime sessions' }).getByRole('row').filter({ hasText: 'agent-bot' });
    await ended.waitFor();
    assert.match(await ended.innerText(), /client/);
    await ended.getByRole('link', { name: /log record of the latest response of the connection/ }).click();
    await page.waitForURL(/#\/logs\/[^?]+$/);
    await eventually(async () => {
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Request detail' }).waitFor();
      await page.getByText('agent-bot').first().waitFor({ timeout: 2000 });
    });
  });
});
