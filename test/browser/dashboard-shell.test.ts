// The dashboard's shell, logs and live tail in a real Chromium against real gateways: logging in
// (and a wrong password refused), finding a request by its content and opening its detail, a request
// made with the OpenAI SDK appearing in the live tail, keyboard navigation, a phone-width screen, and
// loopback access without authentication.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { assertNoHorizontalOverflow, inNewContext, loginThroughForm, openDashboard, type OpenDashboard } from '../helpers/browser.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, basic } from '../helpers/api.ts';
import { eventually } from '../helpers/patience.ts';

const ADMIN = 'admin';
const PASSWORD = 'dashboard-test-password-7f3a';
const T = { timeout: 90_000 };

async function chat(d: OpenDashboard, model: string, content: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${d.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  assert.equal(res.status, 200, await res.text());
}

/** What the tests read of the page's focus (inside page.evaluate; the project's typings have no DOM). */
interface Focused {
  tag: string;
  id: string;
  text: string;
  inNav: boolean;
  inMain: boolean;
  outline: string;
}

interface BrowserEl {
  tagName: string;
  id: string;
  textContent: string | null;
  closest(selector: string): BrowserEl | null;
  blur(): void;
}
interface BrowserGlobals {
  document: { activeElement: BrowserEl | null; documentElement: { scrollWidth: number; clientWidth: number }; cookie: string };
  localStorage: { length: number };
  sessionStorage: { length: number };
  getComputedStyle(el: BrowserEl): { outlineStyle: string };
}

function focused(page: Page): Promise<Focused> {
  return page.evaluate(() => {
    const w = globalThis as unknown as BrowserGlobals;
    const a = w.document.activeElement;
    return {
      tag: a?.tagName ?? '',
      id: a?.id ?? '',
      text: a?.textContent ?? '',
      inNav: a?.closest('nav[aria-label="Pages"]') != null,
      inMain: a?.closest('main') != null,
      outline: a ? w.getComputedStyle(a).outlineStyle : '',
    };
  });
}

/** Opens a hash route, logging in first when the session is not there (each test can run alone). */
async function visit(d: OpenDashboard, hash: string): Promise<void> {
  await d.page.goto(`${d.gw.url}/${hash}`);
  await d.page.reload();
  const form = d.page.getByLabel('Password');
  await d.page.locator('h1').first().waitFor();
  if (await form.count()) await loginThroughForm(d.page, { username: ADMIN, password: PASSWORD });
}

describe('dashboard with authentication on', () => {
  let d: OpenDashboard;
  before(async () => {
    d = await openDashboard({
      config: (u) => ({
        providers: mockProviders(u),
        client: { enable_logging: true },
        governance: {
          auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD },
          routing_rules: [{ name: 'premium', cel_expression: 'headers["x-tier"] == "premium"', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }] }],
        },
      }),
    });
    // Routed by the rule: the detail view shows the audit trail.
    await chat(d, 'openai/gpt-4o', 'What is the capital of Burkina Faso? marker-ouagadougou', { 'x-tier': 'premium' });
    await chat(d, 'anthropic/claude-sonnet-4-5', 'An unrelated question about tides');
    // Records are written in batches after the answers (each second): the search below runs once.
    const api = apiClient(d.gw, basic(ADMIN, PASSWORD));
    await eventually(async () => assert.equal((await api<{ logs: unknown[] }>('GET', '/api/logs?limit=10')).body.logs.length, 2), 10_000);
  });
  after(() => d?.close());

  test('a wrong password shows the gateway error; the right one opens the dashboard with an HttpOnly cookie only', T, async () => {
    const { page } = d;
    await page.getByLabel('Username').fill(ADMIN);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid username or password' }).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Pages' }).count(), 0);

    await loginThroughForm(page, { username: ADMIN, password: PASSWORD });
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.match(await page.getByRole('banner').innerText(), /v\d+\.\d+\.\d+/, 'the header names the gateway version');
    // The session lives in an HttpOnly, SameSite=Strict cookie: nothing a script could read or leak.
    const cookies = await d.context.cookies();
    assert.ok(cookies.length > 0, 'the login set a cookie');
    for (const c of cookies) {
      assert.equal(c.httpOnly, true, `${c.name} is HttpOnly`);
      assert.equal(c.sameSite, 'Strict', `${c.name} is SameSite=Strict`);
    }
    const stored = await page.evaluate(() => {
      const w = globalThis as unknown as BrowserGlobals;
      return { cookie: w.document.cookie, local: w.localStorage.length, session: w.sessionStorage.length };
    });
    assert.deepEqual(stored, { cookie: '', local: 0, session: 0 });
  });

  test('a request is found in the logs by its content and its detail shows the prompt, the answer and the routing audit trail', T, async () => {
    const { page } = d;
    await visit(d, '#/overview');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
    // The filters are folded away until asked for.
    assert.equal(await page.getByLabel('Search content').isVisible(), false);
    await page.getByRole('button', { name: 'Filters' }).click();
    await page.getByLabel('Search content').fill('marker-ouagadougou');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const table = page.getByRole('table', { name: 'Request logs' });
    await page.waitForURL(/content_search=marker-ouagadougou/);
    await table.getByRole('row').nth(1).getByText('gemini/gemini-2.5-flash').waitFor();
    assert.equal(await table.getByRole('row').count(), 2, 'one header row and exactly one matching request');

    await table.getByRole('link', { name: /open request/ }).click();
    await page.waitForURL(/#\/logs\/[^?]+$/);
    await page.getByRole('heading', { level: 1, name: 'Request detail' }).waitFor();
    await page.getByTestId('request-content').getByText('marker-ouagadougou').waitFor();
    assert.match(await page.getByTestId('response-content').innerText(), /Mock reply to: What is the capital of Burkina Faso/);
    assert.match(await page.getByRole('region', { name: 'Tokens and cost' }).innerText(), /Total tokens\s+\d+/);
    const trail = page.getByRole('table', { name: 'Routing rules evaluated, in order' });
    assert.match(await trail.innerText(), /premium[\s\S]*matched → gemini\/gemini-2\.5-flash/);
    // Focus moved to the new page's heading (screen readers start there).
    assert.equal((await focused(page)).tag, 'H1');
    await page.getByRole('link', { name: '← Back to logs' }).click();
    await page.waitForURL(/content_search=marker-ouagadougou/);
  });

  test('the live tail shows a request made with the OpenAI SDK after the page was opened', T, async () => {
    const { page } = d;
    await visit(d, '#/logs');
    const table = page.getByRole('table', { name: 'Request logs' });
    await table.getByText('anthropic/claude-sonnet-4-5').waitFor();
    const before = await table.getByRole('row').count();
    await page.getByRole('button', { name: /Live tail/ }).click();
    await page.getByRole('status').filter({ hasText: 'Live tail: connected' }).waitFor();

    const client = new OpenAI({ baseURL: `${d.gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages: [{ role: 'user', content: 'live tail marker-kilimanjaro' }] });
    assert.match(answer.choices[0]!.message.content ?? '', /marker-kilimanjaro/);

    // The new row arrives over the socket (no reload): first row, the model the SDK asked for.
    await table.getByRole('row').nth(1).getByText('gemini/gemini-2.5-flash').waitFor({ timeout: 20_000 });
    assert.equal(await table.getByRole('row').count(), before + 1);
    await table.getByRole('row').nth(1).getByRole('link').click();
    await page.getByTestId('request-content').getByText('marker-kilimanjaro').waitFor();
  });

  test('a failed request shows a notification that links to its log', T, async () => {
    const { page } = d;
    await visit(d, '#/overview');
    // The shell's live socket (it carries the notifications) is connected.
    await page.locator('button[data-live="open"]').waitFor();
    d.mockProvider!.inject({ status: 500, message: 'mock upstream exploded' });
    const res = await fetch(`${d.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'this one fails' }] }),
    });
    assert.ok(res.status >= 500, `the request failed (${res.status})`);
    const toast = page.getByLabel('New notifications').getByRole('link');
    await toast.first().waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: /Notifications/ }).click();
    await page.getByRole('region', { name: 'Notifications' }).getByText('Request error').waitFor();
    await toast.first().click();
    await page.waitForURL(/#\/logs\/[^?]+$/);
    await page.getByRole('region', { name: 'Error' }).getByText('mock upstream exploded').waitFor();
  });

  test('the keyboard reaches the skip link, the navigation and the page, and focus follows navigation', T, async () => {
    const { page } = d;
    await visit(d, '#/overview');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).text, 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal((await focused(page)).id, 'main');

    // From the top again: Tab until the navigation's Logs link has focus (past the overview's own controls and charts), then open it.
    await page.evaluate(() => (globalThis as unknown as BrowserGlobals).document.activeElement?.blur());
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      const f = await focused(page);
      reached = f.inNav && f.text === 'Logs';
    }
    assert.ok(reached, 'Tab reaches the Logs link in the navigation');
    // Focus is visibly marked (an outline), not hidden.
    assert.notEqual((await focused(page)).outline, 'none');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/logs$/);
    await page.waitForFunction(() => {
      const a = (globalThis as unknown as BrowserGlobals).document.activeElement;
      return a?.tagName === 'H1' && a.textContent === 'Logs';
    });
    // The next Tab stops lead into the page's own controls.
    let inPage = false;
    for (let i = 0; i < 5 && !inPage; i++) {
      await page.keyboard.press('Tab');
      const f = await focused(page);
      inPage = f.inMain && ['BUTTON', 'INPUT', 'SELECT', 'A'].includes(f.tag);
    }
    assert.ok(inPage, 'Tab moves from the heading into the page');
  });

  test('at phone width the navigation is behind a menu button and nothing scrolls sideways', T, async () => {
    await inNewContext(d.browser, { url: `${d.gw.url}/`, viewport: { width: 390, height: 844 }, login: { username: ADMIN, password: PASSWORD } }, async (page) => {
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.waitFor();
      assert.equal(await page.getByRole('navigation', { name: 'Pages' }).isVisible(), false);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.getByRole('figure').first().waitFor();
      await assertNoHorizontalOverflow(page);

      await menu.click();
      assert.equal(await menu.getAttribute('aria-expanded'), 'true');
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Logs' }).click();
      await page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
      assert.equal(await page.getByRole('navigation', { name: 'Pages' }).isVisible(), false, 'the menu closes after a choice');
      await page.getByRole('table', { name: 'Request logs' }).waitFor();
      await assertNoHorizontalOverflow(page);
    });
  });
});

describe('dashboard without authentication', () => {
  let d: OpenDashboard;
  before(async () => {
    d = await openDashboard({ config: (u) => ({ providers: mockProviders(u), client: { enable_logging: true } }) });
  });
  after(() => d?.close());

  test('a loopback browser reaches the dashboard without a login, and the live tail connects without a ticket', T, async () => {
    const { page } = d;
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(await page.getByLabel('Password').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Log out' }).count(), 0);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('button', { name: /Live tail/ }).click();
    await page.getByRole('status').filter({ hasText: 'Live tail: connected' }).waitFor();
    await chat(d, 'openai/gpt-4o', 'open gateway tail');
    await page.getByRole('table', { name: 'Request logs' }).getByText('openai/gpt-4o').waitFor({ timeout: 20_000 });
  });
});
