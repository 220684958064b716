// Every page of the dashboard, read from the router's own list (dashboard/src/pages/registry.ts, the
// list the navigation is drawn from), so a new page is covered the moment it is registered: in
// Debian's Chromium against a gateway with data (governance objects, a routing rule, traffic from
// the official OpenAI SDK), each page at 1280 px and at 390 px has no serious or critical axe-core
// violation and no sideways scroll, and the keyboard alone reaches the navigation and the page's
// main action with a visible focus ring.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { assertNoHorizontalOverflow, inNewContext, loginThroughForm, openDashboard, reopen, type OpenDashboard } from '../helpers/browser.ts';
import { axeContext, seriousViolations } from '../helpers/axe.ts';
import { mockProviders } from '../helpers/providers.ts';
import { patience } from '../helpers/patience.ts';

const T = { timeout: 300_000 };
const ADMIN = { username: 'admin', password: 'every-page-password-41c9' };
const VK = 'sk-bf-every-page-0123456789abc';

/** The router's list, from its source (it imports TSX, which Node does not load). */
const PAGES = [...readFileSync(new URL('../../dashboard/src/pages/registry.ts', import.meta.url), 'utf8').matchAll(/\{\s*path:\s*'([^']+)',\s*title:\s*'([^']+)'/g)].map((m) => ({ path: m[1]!, title: m[2]! }));

interface El {
  id: string;
  tagName: string;
  textContent: string | null;
  closest(s: string): El | null;
  querySelector(s: string): El | null;
  querySelectorAll(s: string): ArrayLike<El>;
  setAttribute(k: string, v: string): void;
  hasAttribute(k: string): boolean;
  getAttribute(k: string): string | null;
  blur(): void;
  getClientRects(): ArrayLike<unknown>;
}
interface Win {
  document: El & { activeElement: El | null; documentElement: { scrollWidth: number; clientWidth: number } };
  getComputedStyle(e: El): { outlineStyle: string; outlineWidth: string; visibility: string };
}
// Functions passed to page.evaluate run in the page: they name `globalThis` themselves, never a helper of this file.

/** Opens a route afresh and waits until its data is in (no loading indicator left). */
async function visit(page: Page, url: string): Promise<void> {
  await reopen(page, url);
  await page.locator('main h1').first().waitFor();
  await page.waitForFunction(() => !(globalThis as unknown as Win).document.querySelector('main .loading'));
}

/**
 * Marks the page's main action: the primary button of its header, else the header's first control,
 * else the page's first control.
 * Answers its description (or undefined: a page with no control at all).
 */
function markMainAction(page: Page): Promise<string | undefined> {
  return page.evaluate(() => {
    const FOCUSABLE = 'a[href], button:not([disabled]), select:not([disabled]), input:not([disabled]), textarea:not([disabled]), [tabindex="0"]';
    const d = (globalThis as unknown as Win).document;
    const visible = (e: El) => e.getClientRects().length > 0;
    const pick = (list: ArrayLike<El>) => Array.from(list).find(visible);
    const main = d.querySelector('main')!;
    // Banners about the gateway (notices, the first-run hint) are not the page's own.
    const own = Array.from(main.querySelectorAll(FOCUSABLE)).filter((e) => visible(e) && !e.closest('.banner') && !e.closest('[aria-label="Protect this dashboard"]'));
    const target = pick(main.querySelectorAll('.page-actions .btn-primary:not([disabled])')) ?? pick(main.querySelectorAll(`.page-actions :is(${FOCUSABLE})`)) ?? own[0];
    if (!target) return undefined;
    target.setAttribute('data-main-action', '');
    return `${target.tagName.toLowerCase()} “${(target.textContent || target.getAttribute('aria-label') || '').trim().slice(0, 40)}”`;
  });
}

interface Focus {
  inNav: boolean;
  isMenu: boolean;
  isAction: boolean;
  outline: string;
}

const focusNow = (page: Page): Promise<Focus> =>
  page.evaluate(() => {
    const w = globalThis as unknown as Win;
    const a = w.document.activeElement;
    const style = a ? w.getComputedStyle(a) : undefined;
    return {
      inNav: a?.closest('nav[aria-label="Pages"]') != null,
      isMenu: a?.tagName === 'BUTTON' && (a.textContent ?? '').trim() === 'Menu',
      isAction: a?.hasAttribute('data-main-action') ?? false,
      outline: style && style.outlineStyle !== 'none' && style.outlineWidth !== '0px' ? style.outlineStyle : 'none',
    };
  });

describe('every dashboard page', () => {
  let d: OpenDashboard;
  before(async () => {
    d = await openDashboard({
      config: (u) => ({
        providers: mockProviders(u),
        governance: {
          auth_config: { is_enabled: true, admin_username: ADMIN.username, admin_password: ADMIN.password },
          budgets: [{ id: 'monthly', max_limit: 100, reset_duration: '1M' }],
          rate_limits: [{ id: 'std', request_max_limit: 600, request_reset_duration: '1m' }],
          customers: [{ id: 'acme', name: 'Acme' }],
          teams: [{ id: 'search', name: 'Search', customer_id: 'acme', budget_id: 'monthly' }],
          virtual_keys: [{ id: 'search-prod', name: 'search-prod', value: VK, team_id: 'search', rate_limit_id: 'std', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] }],
          routing_rules: [{ name: 'premium', cel_expression: 'headers["x-tier"] == "premium"', targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }] }],
        },
      }),
      login: ADMIN,
      path: '#/overview',
    });
    const sdk = new OpenAI({ baseURL: `${d.gw.url}/v1`, apiKey: VK, maxRetries: 0 });
    for (const content of ['first', 'second']) await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] });
    d.mockProvider!.inject({ status: 500, message: 'upstream down' });
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'fails' }] }).catch(() => undefined);
  });
  after(() => d?.close());

  test('the router lists the pages the navigation shows', T, async () => {
    assert.ok(PAGES.length >= 16, `${PAGES.length} pages read from the registry`);
    const nav = await d.page.locator('nav[aria-label="Pages"] a').allTextContents();
    assert.deepEqual(nav, PAGES.map((p) => p.title));
  });

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    test(`axe-core: no serious or critical violation, and no sideways scroll, on every page at ${viewport.width} px`, T, async () => {
      const context = await axeContext(d.browser, viewport);
      context.setDefaultTimeout(patience(15_000));
      try {
        const page = await context.newPage();
        await page.goto(`${d.gw.url}/#/overview`);
        await loginThroughForm(page, ADMIN);
        const found: string[] = [];
        for (const p of PAGES) {
          await visit(page, `${d.gw.url}/#/${p.path}`);
          assert.equal(await page.title(), `${p.title} · Skybridge`);
          for (const v of await seriousViolations(page)) found.push(`#/${p.path}: ${v}`);
          await assertNoHorizontalOverflow(page, `#/${p.path}`);
        }
        assert.deepEqual(found, []);
      } finally {
        await context.close();
      }
    });

    test(`the keyboard alone reaches the navigation and each page's main action, with a visible focus, at ${viewport.width} px`, T, async () => {
      await inNewContext(d.browser, { url: `${d.gw.url}/#/overview`, viewport, login: ADMIN, timeoutMs: patience(15_000) }, async (page) => {
        for (const p of PAGES) {
          await visit(page, `${d.gw.url}/#/${p.path}`);
          const action = await markMainAction(page);
          assert.ok(action, `#/${p.path} has a control to reach`);
          await page.evaluate(() => (globalThis as unknown as Win).document.activeElement?.blur());
          let nav = false;
          let reached: Focus | undefined;
          for (let i = 0; i < 80 && !reached; i++) {
            await page.keyboard.press('Tab');
            const f = await focusNow(page);
            // At phone width the navigation is behind the Menu button: open it with the keyboard once.
            if (f.isMenu && !nav && viewport.width < 760) {
              await page.keyboard.press('Enter');
              continue;
            }
            if (f.inNav) {
              nav = true;
              assert.notEqual(f.outline, 'none', `#/${p.path}: a focused navigation link shows its focus`);
            }
            if (f.isAction) reached = f;
          }
          assert.ok(nav, `#/${p.path}: Tab reaches the navigation`);
          assert.ok(reached, `#/${p.path}: Tab reaches the main action, ${action}`);
          assert.notEqual(reached.outline, 'none', `#/${p.path}: the main action shows its focus`);
        }
      });
    });
  }
});
