// The governance pages of the dashboard (providers, virtual keys, teams, budgets, models) in a real
// Chromium against a running gateway: a virtual key created in the browser is shown once, works for
// a chat request made with the official OpenAI SDK, and its usage shows against its limits (and the
// request in the logs' live tail); a bad value shows the gateway's message under its field; provider
// key values never reach the page unmasked; with the configuration owned by Kubernetes (a real
// kube-apiserver) the pages are read-only and say which custom resource to edit.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { openDashboard, type OpenDashboard } from '../helpers/browser.ts';
import { openKubeDashboard } from '../helpers/browser-kube.ts';
import { type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
/** Long enough that the API shows its first 3 and last 4 characters (sk-...cdef), never the rest. */
const OPENAI_SECRET = 'sk-openai-secret-0123456789abcdef';
const ANTHROPIC_SECRET = 'sk-ant-secret-fedcba9876543210';

const cleanup: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

async function dashboard(path: string): Promise<OpenDashboard> {
  const d = await openDashboard({
    config: () => ({
      client: { enable_logging: true, enforce_auth_on_inference: true },
      governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } },
    }),
    // The providers are made through /api, so the pages may edit them (config.json's are read-only there).
    setup: async (gw, mockUrl) => {
      const providers = mockProviders(mockUrl!, {
        openai: { keys: [{ name: 'openai-key', value: OPENAI_SECRET, weight: 1 }] },
        anthropic: { keys: [{ name: 'anthropic-key', value: ANTHROPIC_SECRET, weight: 1 }] },
      });
      for (const [provider, body] of Object.entries(providers)) {
        const res = await fetch(`${gw.url}/api/providers`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${ADMIN}:${PASSWORD}`).toString('base64')}` },
          body: JSON.stringify({ provider, ...(body as object) }),
        });
        assert.equal(res.status, 201, await res.text());
      }
    },
    login: { username: ADMIN, password: PASSWORD },
    path,
  });
  cleanup.push(() => d.close());
  return d;
}

const chat = (gw: RunningGateway, key: string) =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Say hello' }] });

/** The error shown under the labelled field of the open dialog. */
const fieldError = (page: Page, label: string) => page.getByRole('dialog').locator('.field-invalid', { hasText: label }).locator('.field-error');

test('a virtual key created in the browser is shown once, serves an OpenAI SDK request, and its usage and the request show live', async () => {
  const d = await dashboard('#/virtual-keys');
  const { page, gw } = d;
  await page.getByRole('heading', { name: 'Virtual keys', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'New virtual key' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name', { exact: true }).fill('checkout');
  await dialog.getByLabel('Budget (USD)', { exact: true }).check();
  await dialog.getByLabel('Budget max (USD)', { exact: true }).fill('25');
  await dialog.getByLabel('Rate limit', { exact: true }).check();
  await dialog.getByLabel(/^Max requests(?! of)/).fill('5');
  // The openai provider config gets a request limit of its own.
  await dialog.getByText('Budget and rate limit of provider 1').click();
  await dialog.getByLabel('Rate limit of provider 1').check();
  await dialog.getByLabel(/^Max requests of provider 1/).fill('4');
  await dialog.getByRole('button', { name: 'Create virtual key' }).click();

  const value = ((await page.getByTestId('shown-once').textContent()) ?? '').trim();
  assert.match(value, /^sk-bf-[0-9a-f-]{36}$/);
  await dialog.waitFor({ state: 'detached' });
  // The list shows the key masked.
  const row = page.getByRole('row').filter({ hasText: 'checkout' });
  await row.getByText(`${value.slice(0, 3)}...${value.slice(-4)}`).waitFor();

  const answer = await chat(gw, value);
  assert.ok(answer.choices[0].message.content);

  // The detail view: the request counts against the key's rate limit; its cost against the budget.
  await row.getByRole('link', { name: 'checkout' }).click();
  const detail = page.getByTestId('vk-detail');
  const requests = detail.getByRole('progressbar', { name: 'Requests of checkout (1h)' });
  await eventually(async () => assert.equal(await requests.getAttribute('aria-valuenow'), '20'), 15_000);
  await detail.getByText('Requests of checkout (1h): 1 / 5').waitFor();
  await detail.getByText('Requests of checkout / openai (1h): 1 / 4').waitFor();
  const budget = detail.getByRole('progressbar', { name: 'Budget of checkout (1M)' });
  await eventually(async () => assert.notEqual(await budget.getAttribute('aria-valuenow'), null), 15_000);
  // The request is counted when it is admitted, its cost charged after the answer: the usage the
  // page read may be from between the two, and the next read (after a log event, or the 10 s poll)
  // has the cost.
  await eventually(async () => assert.doesNotMatch((await detail.textContent()) ?? '', /Budget of checkout \(1M\): \$0\.00 \/ \$25\.00/, 'the chat request cost something'), 15_000);

  // Once the page moved on, the full value is nowhere in it.
  await page.goto(`${gw.url}/#/budgets`);
  await page.getByRole('heading', { name: 'Budgets & rate limits', level: 1 }).waitFor();
  await page.getByRole('row').filter({ hasText: 'Virtual key' }).filter({ hasText: 'checkout' }).first().waitFor();
  await page.getByRole('progressbar', { name: 'Requests checkout (1h)' }).waitFor();
  assert.ok(!(await page.content()).includes(value), 'the virtual key value is shown once only');

  // Live tail: a second request with the key appears in the logs without a reload.
  await page.goto(`${gw.url}/#/logs`);
  await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor();
  const withKey = page.getByRole('row').filter({ hasText: 'checkout' });
  await withKey.first().waitFor();
  const before = await withKey.count();
  await page.getByRole('button', { name: 'Live tail' }).click();
  await page.getByText('Live tail: connected').waitFor();
  await chat(gw, value);
  await eventually(async () => assert.equal(await withKey.count(), before + 1), 10_000);

  // Edited in the browser (deactivated), the key keeps its limits and stops working at once.
  await page.goto(`${gw.url}/#/virtual-keys`);
  await page.getByRole('button', { name: 'Edit checkout' }).click();
  await page.getByRole('dialog').getByLabel('Active').uncheck();
  await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  await page.getByRole('row').filter({ hasText: 'checkout' }).getByText('inactive').waitFor();
  await page.getByRole('row').filter({ hasText: 'checkout' }).getByText('Requests of checkout (1h): 2 / 5').waitFor();
  await assert.rejects(chat(gw, value), (err: unknown) => err instanceof OpenAI.APIError && err.status === 401 && /inactive/.test(err.message));
});

test('a bad value shows the gateway message under its field; provider keys stay masked in the page', async () => {
  const d = await dashboard('#/virtual-keys');
  const { page, gw } = d;
  await page.getByRole('button', { name: 'New virtual key' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name', { exact: true }).fill('bad-budget');
  await dialog.getByLabel('Budget (USD)', { exact: true }).check();
  await dialog.getByLabel('Budget max (USD)', { exact: true }).fill('10');
  await dialog.getByLabel(/^Budget resets every(?! of)/).fill('2x');
  await dialog.getByRole('button', { name: 'Create virtual key' }).click();
  const err = fieldError(page, 'Budget resets every');
  await err.waitFor();
  assert.match((await err.textContent()) ?? '', /budget\.reset_duration/);
  assert.match((await dialog.locator('.banner-error').textContent()) ?? '', /\(field: budget\.reset_duration\)/);
  // Fixed, it goes through.
  await dialog.getByLabel(/^Budget resets every(?! of)/).fill('1d');
  await dialog.getByRole('button', { name: 'Create virtual key' }).click();
  await page.getByTestId('shown-once').waitFor();

  // Teams: a duplicate name is refused with the gateway's 409 message on the name field's form.
  await page.goto(`${gw.url}/#/teams`);
  for (let i = 0; i < 2; i++) {
    await page.getByRole('button', { name: 'New team' }).click();
    await dialog.getByLabel('Name', { exact: true }).fill('search');
    await dialog.getByRole('button', { name: 'Create team' }).click();
    if (i === 0) await dialog.waitFor({ state: 'detached' });
  }
  await fieldError(page, 'Name').getByText(/already exists/).waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('row').filter({ hasText: 'search' }).first().waitFor();

  // Models: a pricing override with a negative price names the field.
  await page.goto(`${gw.url}/#/models`);
  await page.getByRole('button', { name: 'New pricing override' }).click();
  await dialog.getByLabel('Model pattern').fill('gpt-4o');
  await dialog.getByLabel('Input $/token').fill('-1');
  await dialog.getByRole('button', { name: 'Add pricing override' }).click();
  await fieldError(page, 'Input $/token').waitFor();
  await dialog.getByLabel('Input $/token').fill('0.0000025');
  await dialog.getByRole('button', { name: 'Add pricing override' }).click();
  // In the providers' own overrides (the prices in force list gpt-4o too).
  await page.getByRole('table', { name: 'Pricing overrides' }).getByRole('row').filter({ hasText: 'gpt-4o' }).getByText('$2.5').waitFor();

  // Providers: every key shows masked; the full values are nowhere in the page's HTML.
  await page.goto(`${gw.url}/#/providers`);
  await page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
  await page.getByText('sk-...cdef').waitFor();
  await page.getByText('sk-...3210').waitFor();
  // Editing a key shows its masked value as a hint, never in the field.
  await page.getByRole('button', { name: 'Edit key openai-key of openai' }).click();
  assert.equal(await dialog.getByLabel('Key value').inputValue(), '');
  await dialog.getByLabel('Weight').fill('2');
  await dialog.getByRole('button', { name: 'Save key' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('row').filter({ hasText: 'openai-key' }).getByRole('cell', { name: '2', exact: true }).waitFor();
  const html = await page.content();
  for (const secret of [OPENAI_SECRET, ANTHROPIC_SECRET, 'secret-0123', 'secret-fedc']) assert.ok(!html.includes(secret), `page HTML leaks ${secret}`);
  // The weight change kept the stored value: the key still serves requests.
  const res = await fetch(`${gw.url}/api/providers/openai/keys`, { headers: { authorization: `Basic ${Buffer.from(`${ADMIN}:${PASSWORD}`).toString('base64')}` } });
  const keys = ((await res.json()) as { keys: Array<{ value: string; weight: number }> }).keys;
  assert.deepEqual(keys.map((k) => [k.value, k.weight]), [['sk-...cdef', 2]]);
});

test('with the configuration from Kubernetes the pages are read-only and name the custom resource', { timeout: 600_000 }, async (t) => {
  let kube: KubeApiServer;
  try {
    kube = await startKubeApiServer();
  } catch (err) {
    // Building the API server needs Go and the module proxy; without them there is nothing to follow.
    t.skip(`no kube-apiserver: ${(err as Error).message.split('\n')[0]}`);
    return;
  }
  cleanup.push(() => kube.stop());
  const NS = 'skybridge';
  const document = {
    providers: { openai: { keys: [{ name: 'key0', value: 'env.PROVIDER_SKYBRIDGE_OPENAI_KEY0', weight: 1 }] } },
    governance: {
      budgets: [{ id: 'vk-checkout', max_limit: 10, reset_duration: '1M' }],
      virtual_keys: [{ id: 'checkout', name: 'checkout', value: 'env.VIRTUALKEY_TEAM_A_CHECKOUT_VALUE', budget_id: 'vk-checkout', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }],
    },
  };
  const { gw, page, close } = await openKubeDashboard(kube, {
    namespace: NS,
    document,
    secrets: { PROVIDER_SKYBRIDGE_OPENAI_KEY0: OPENAI_SECRET, VIRTUALKEY_TEAM_A_CHECKOUT_VALUE: 'sk-bf-checkout-secret-1' },
    managed: { providers: ['openai'], virtual_keys: ['checkout'] },
    sources: { 'providers/openai': `Provider ${NS}/openai`, 'virtual_keys/checkout': 'VirtualKey team-a/checkout' },
    path: '#/virtual-keys',
  });
  cleanup.push(close);

  // The rendering is followed shortly after start.
  await page.getByRole('row').filter({ hasText: 'checkout' }).waitFor();
  await page.getByText(/Edit the VirtualKey custom resources instead/).waitFor();
  await page.getByRole('row').filter({ hasText: 'checkout' }).getByRole('link', { name: 'checkout' }).click();
  await page.getByTestId('vk-detail').getByText('VirtualKey team-a/checkout').waitFor();
  await page.getByTestId('vk-detail').getByRole('progressbar', { name: 'Budget of checkout (1M)' }).waitFor();
  for (const name of ['New virtual key', 'Edit', 'Delete']) assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name} button`);

  await page.goto(`${gw.url}/#/providers`);
  await page.getByText(/Edit the Provider custom resources instead/).waitFor();
  // The rendered document names the Secret's variable; the value itself never reaches /api.
  await page.getByText('env.PROVIDER_SKYBRIDGE_OPENAI_KEY0').waitFor();
  await page.getByText('Provider skybridge/openai').waitFor();
  assert.equal(await page.getByRole('button', { name: /^(New provider|Add key|Edit|Delete)/ }).count(), 0);
  assert.ok(!(await page.content()).includes(OPENAI_SECRET));

  for (const [hash, button] of [['#/teams', 'New team'], ['#/budgets', 'New budget'], ['#/models', 'New model config']] as const) {
    await page.goto(`${gw.url}/${hash}`);
    await page.getByText(/Read-only: this gateway's configuration comes from Kubernetes/).waitFor();
    assert.equal(await page.getByRole('button', { name: button }).count(), 0, `${hash}: no ${button}`);
  }

  // The settings are shown with their values, and nothing on the page writes (the banner says why).
  await page.goto(`${gw.url}/#/settings`);
  await page.getByText(/Read-only: this gateway's configuration comes from Kubernetes/).waitFor();
  assert.equal(await page.locator('[data-setting="enable_logging"] select').isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: /^Save changes/ }).count(), 0);
});
