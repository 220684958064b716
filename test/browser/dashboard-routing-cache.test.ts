// The Routing rules and Plugins & cache pages in a real Chromium against a running gateway and the
// mock provider. Routing: a rule with invalid CEL shows the compiler's error as it is typed and
// cannot be saved; a valid one is tested in the editor ("Test this rule": decision and audit trail
// from the gateway's routing engine), saved, listed, routes real requests, and is deleted. Cache:
// switching the semantic_cache plugin on in the page makes a repeated request a cache hit, the
// hit shows in the page's hit rates, and clearing by key makes the next request a miss again.
// Kubernetes mode: both pages name the custom resource kind to edit and offer no write, while
// the rule tester (which changes nothing) still answers.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { inNewContext, openDashboard, reopen, type OpenDashboard } from '../helpers/browser.ts';
import { openKubeDashboard } from '../helpers/browser-kube.ts';
import { eventually } from '../helpers/patience.ts';
import { startKubeApiServer } from '../helpers/kube.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const open: OpenDashboard[] = [];
after(async () => {
  await Promise.all(open.map((d) => d.close()));
});

const SEEDED = { id: 'seeded', name: 'seeded premium', priority: 1, cel_expression: 'headers["x-tier"] == "premium"', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }] };

async function chat(url: string, headers: Record<string, string>, content = 'route me'): Promise<{ model: string; provider?: string; cacheHit?: boolean }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { model: string; extra_fields?: { provider?: string; cache_debug?: { cache_hit: boolean } } };
  return { model: body.model, provider: body.extra_fields?.provider, cacheHit: body.extra_fields?.cache_debug?.cache_hit };
}

test('routing rules: invalid CEL is refused as typed, a valid rule is tested, saved, routes requests and is deleted', { timeout: 120_000 }, async () => {
  const d = await openDashboard({ config: (mock) => ({ providers: mockProviders(mock), governance: { routing_rules: [SEEDED] } }), path: '#/routing' });
  open.push(d);
  const { page } = d;
  await page.getByRole('heading', { name: 'Routing rules', level: 1 }).waitFor();
  const global = page.getByRole('table', { name: 'Global routing rules' });
  // The rule of config.json is listed with the badge that says where it is edited.
  await global.getByRole('row').filter({ hasText: 'seeded premium' }).getByText('config.json').waitFor();

  await page.getByRole('button', { name: 'New rule' }).click();
  const dialog = page.getByRole('dialog', { name: 'New routing rule' });
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('cheap to claude');
  await dialog.getByRole('spinbutton', { name: /^Priority/ }).fill('5');
  const cel = dialog.getByRole('textbox', { name: /^CEL expression/ });
  await cel.fill('headers["x-tier"] ==');
  // The gateway's compiler answers as the person types: its message, next to the field.
  const celError = dialog.locator('.field-error[role=alert]').filter({ hasText: 'invalid CEL syntax' });
  await celError.waitFor();
  assert.match((await celError.textContent()) ?? '', /column 21/);
  const create = dialog.getByRole('button', { name: 'Create rule' });
  assert.equal(await create.isDisabled(), true, 'a rule whose CEL does not compile cannot be saved');
  // Submitting anyway (the form submitted by script, past the disabled button) is refused by the
  // page before anything is sent, naming the field; nothing is stored.
  await dialog.getByRole('form', { name: 'New routing rule' }).evaluate((f) => (f as unknown as { requestSubmit(): void }).requestSubmit());
  await dialog.getByText('(field: cel_expression)').waitFor();
  const api = apiClient(d.gw);
  const stored = await api<{ rules: Array<{ name: string }> }>('GET', '/api/routing/rules');
  assert.deepEqual(stored.body.rules.map((r) => r.name), ['seeded premium']);

  await cel.fill('headers["x-tier"] == "cheap"');
  await dialog.getByText('Valid CEL.').waitFor();
  assert.equal(await celError.count(), 0);
  await dialog.getByRole('combobox', { name: 'Target 1 provider' }).selectOption('anthropic');
  await dialog.getByRole('textbox', { name: /^Target 1 model/ }).fill('claude-sonnet-4-5');

  // Test this rule: the draft is evaluated with the live rules by the gateway's routing engine.
  const tester = dialog.getByRole('region', { name: 'Test this rule' });
  await tester.getByRole('textbox', { name: /^Sample headers/ }).fill('x-tier: cheap');
  await tester.getByRole('button', { name: 'Run test' }).click();
  const result = tester.getByTestId('routing-test-result');
  await result.waitFor();
  assert.match((await result.getByTestId('matched-rule').textContent()) ?? '', /cheap to claude.*global/);
  assert.equal((await result.getByTestId('routed-to').textContent())?.trim(), 'anthropic/claude-sonnet-4-5');
  // The trail in evaluation order: the seeded rule (priority 1) first, not matching, then the draft.
  const trail = result.getByTestId('audit-trail').getByRole('listitem');
  assert.equal(await trail.count(), 2);
  assert.match((await trail.nth(0).textContent()) ?? '', /seeded premium.*no match/);
  assert.match((await trail.nth(1).textContent()) ?? '', /cheap to claude.*matched → anthropic\/claude-sonnet-4-5/);

  await create.click();
  await dialog.waitFor({ state: 'detached' });
  const row = global.getByRole('row').filter({ hasText: 'cheap to claude' });
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', /anthropic\/claude-sonnet-4-5/);
  // Listed in the engine's order: the seeded priority 1 before priority 5.
  const names = await global.locator('tbody tr td:nth-child(2)').allTextContents();
  assert.deepEqual(names.map((n) => n.replace(/config\.json$/, '').trim()), ['seeded premium', 'cheap to claude']);

  // The saved rule routes real requests; the page's tester over the whole rule set agrees.
  assert.equal((await chat(d.gw.url, { 'x-tier': 'cheap' })).provider, 'anthropic');
  const setTester = page.getByRole('region', { name: 'Test the rule set' });
  await setTester.getByRole('textbox', { name: /^Sample headers/ }).fill('x-tier: premium');
  await setTester.getByRole('button', { name: 'Run test' }).click();
  assert.equal((await setTester.getByTestId('routed-to').textContent())?.trim(), 'gemini/gemini-2.5-flash');
  assert.match((await setTester.getByTestId('matched-rule').textContent()) ?? '', /seeded premium/);

  await global.getByRole('button', { name: 'Delete cheap to claude' }).click();
  await page.getByRole('dialog', { name: 'Delete rule cheap to claude?' }).getByRole('button', { name: 'Delete rule' }).click();
  await row.waitFor({ state: 'detached' });
  assert.equal((await chat(d.gw.url, { 'x-tier': 'cheap' })).provider, 'openai');
});

test('plugins & cache: toggling the cache plugin on makes a repeat a hit, counted on the page; clear by key', { timeout: 120_000 }, async () => {
  const d = await openDashboard({
    config: (mock) => ({
      providers: mockProviders(mock),
      vector_store: { enabled: true, type: 'sqlite' },
    }),
    // Made through /api, so the page may switch it (a plugin of config.json is read-only there).
    setup: async (gw) => {
      const res = await apiClient(gw)('POST', '/api/plugins', { name: 'semantic_cache', enabled: false, config: { dimension: 1, ttl: '5m' } });
      assert.equal(res.status, 201, res.text);
    },
    path: '#/cache',
  });
  open.push(d);
  const { page } = d;
  // The cache statistics load apart from the plugin list: held back, the store's line says it is
  // loading (not a missing store), and fills in when they arrive.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  // (A request of the page the reload replaced is gone by the time it is let through.)
  await page.route('**/api/cache/stats', async (route) => (await held, route.continue().catch(() => undefined)));
  await reopen(page, `${d.gw.url}/#/cache`);
  await page.getByRole('heading', { name: 'Plugins & cache', level: 1 }).waitFor();
  const status = page.getByTestId('plugin-status-semantic_cache');
  assert.equal((await status.textContent())?.trim(), 'disabled');
  await page.getByTestId('vector-store').filter({ hasText: /^loading…/ }).waitFor();
  release();
  await page.unroute('**/api/cache/stats');
  await eventually(async () => assert.match((await page.getByTestId('vector-store').textContent()) ?? '', /sqlite.*open/), 5000);

  const key = `browser-${Date.now()}`;
  const h = { 'x-bf-cache-key': key };
  // Off: the cache is not consulted at all.
  assert.equal((await chat(d.gw.url, h, 'cache me')).cacheHit, undefined);

  await page.getByRole('checkbox', { name: 'Enable semantic_cache' }).check();
  await eventually(async () => assert.equal((await status.textContent())?.trim(), 'active'), 5000);

  assert.equal((await chat(d.gw.url, h, 'cache me')).cacheHit, false);
  await eventually(async () => assert.equal((await chat(d.gw.url, h, 'cache me')).cacheHit, true), 5000);

  await page.getByRole('button', { name: 'Refresh' }).click();
  await eventually(async () => {
    assert.equal((await page.getByTestId('cache-hits-direct').textContent())?.trim(), '1');
    assert.match((await page.getByTestId('cache-hit-rate').textContent()) ?? '', /%$/);
  }, 8000);

  // The overview counts the hit as well: a cache hit rate above zero, with the spend it saved beside
  // it (the stored answer's price).
  await inNewContext(d.browser, { url: `${d.gw.url}/#/overview` }, async (overview) => {
    const stat = overview.getByLabel('Totals, last hour').locator('.stat').filter({ hasText: 'Cache hit rate' });
    await stat.waitFor();
    await eventually(async () => {
      const text = (await stat.textContent()) ?? '';
      const m = /([\d.]+)%\s*saved \$([\d.]+)/.exec(text);
      assert.ok(m && Number(m[1]) > 0 && Number(m[2]) > 0, `cache figures: ${text}`);
    }, 8000);
  });

  await page.getByRole('textbox', { name: /^Cache key/ }).fill(key);
  await page.getByRole('button', { name: 'Clear by key' }).click();
  await page.getByText(`Cleared 1 entry for ${key}.`).waitFor();
  assert.equal((await chat(d.gw.url, h, 'cache me')).cacheHit, false);

  // A setting saved in the page applies to the next request: a default cache key caches keyless requests.
  assert.equal((await chat(d.gw.url, {}, 'keyless')).cacheHit, undefined);
  await page.getByRole('textbox', { name: /^Default cache key/ }).fill('everyone');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Settings saved').waitFor();
  assert.equal((await chat(d.gw.url, {}, 'keyless')).cacheHit, false);
  await eventually(async () => assert.equal((await chat(d.gw.url, {}, 'keyless')).cacheHit, true), 5000);
  const stored = await apiClient(d.gw)<{ config: Record<string, unknown> }>('GET', '/api/plugins/semantic_cache');
  assert.equal(stored.body.config.default_cache_key, 'everyone');
  assert.equal(stored.body.config.dimension, 1, 'the rest of the config is kept');

  // And off again: the page's toggle takes effect on the next request.
  await page.getByRole('checkbox', { name: 'Enable semantic_cache' }).uncheck();
  await eventually(async () => assert.equal((await status.textContent())?.trim(), 'disabled'), 5000);
  assert.equal((await chat(d.gw.url, h, 'cache me')).cacheHit, undefined);
});

test('kubernetes mode: read-only banners name RoutingRule and CachePolicy; the rule tester still works', { timeout: 900_000 }, async (t) => {
  const NS = 'skybridge';
  const kube = await startKubeApiServer();
  t.after(() => kube.stop());
  const document = {
    providers: { openai: { keys: [{ name: 'k', value: 'env.OPENAI_K', weight: 1 }] } },
    governance: { routing_rules: [{ id: 'premium', name: 'premium', cel_expression: 'headers["x-plan"] == "premium"', targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }] }] },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1 } }],
  };
  const { gw, page, close } = await openKubeDashboard(kube, {
    namespace: NS,
    document,
    secrets: { OPENAI_K: 'sk-kube-test' },
    managed: { routing_rules: ['premium'], plugins: ['semantic_cache'] },
    sources: { 'routing_rules/premium': 'RoutingRule team-a/premium', 'plugins/semantic_cache': 'CachePolicy team-a/cache' },
    path: '#/routing',
  });
  t.after(close);

  await page.getByText('Edit the RoutingRule custom resources instead.').waitFor();
  assert.equal(await page.getByRole('button', { name: 'New rule' }).isDisabled(), true);
  const global = page.getByRole('table', { name: 'Global routing rules' });
  await global.getByText('RoutingRule team-a/premium').waitFor();
  assert.equal(await global.getByRole('button', { name: 'Delete premium' }).count(), 0);
  await global.getByRole('button', { name: 'View premium' }).click();
  const dialog = page.getByRole('dialog', { name: 'Rule premium' });
  assert.equal(await dialog.getByRole('button', { name: /^Save/ }).count(), 0);
  const tester = dialog.getByRole('region', { name: 'Test this rule' });
  await tester.getByRole('textbox', { name: /^Sample headers/ }).fill('x-plan: premium');
  await tester.getByRole('button', { name: 'Run test' }).click();
  assert.equal((await tester.getByTestId('routed-to').textContent())?.trim(), 'openai/gpt-4o-mini');
  await dialog.getByRole('button', { name: 'Close' }).click();

  await page.goto(`${gw.url}/#/cache`);
  await page.getByText('Edit the CachePolicy custom resources instead.').waitFor();
  assert.equal(await page.getByRole('checkbox', { name: 'Enable semantic_cache' }).isDisabled(), true);
  assert.equal(await page.getByRole('textbox', { name: /^TTL/ }).isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Save settings' }).count(), 0);
  // Clearing entries changes no configuration, so Kubernetes mode allows it (managed.ts): not asserted disabled.
});
