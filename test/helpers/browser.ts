// A real gateway (and, when the config asks for one, the mock provider) opened in Debian's Chromium
// driven by playwright-core: what every browser test starts from.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from './gateway.ts';
import { patience } from './patience.ts';

export const CHROMIUM = process.env.SKYBRIDGE_CHROMIUM ?? '/usr/bin/chromium';

export interface DashboardOptions {
  /** The gateway's config.json; a function receives the mock provider's url (the mock is started for it). */
  config: Record<string, unknown> | ((mockUrl: string) => Record<string, unknown>);
  env?: NodeJS.ProcessEnv;
  /** Logs in through the dashboard's login form before handing the page over. */
  login?: { username: string; password: string };
  /** Browser viewport; default 1280×800. */
  viewport?: { width: number; height: number };
  /** Hash route to open first, e.g. '#/logs'; default the dashboard's start page. */
  path?: string;
  /** Runs once the gateway is up, before the page opens: e.g. objects made through /api (editable there, unlike config.json's). */
  setup?: (gw: RunningGateway, mockUrl: string | undefined) => Promise<void>;
}

export interface OpenDashboard {
  page: Page;
  context: BrowserContext;
  browser: Browser;
  gw: RunningGateway;
  /** The mock provider's url when one was started (config given as a function). */
  mock: string | undefined;
  mockProvider: MockProvider | undefined;
  close(): Promise<void>;
}

/** Launches headless Chromium (one browser per call; tests close it with `close()`). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export async function openDashboard(opts: DashboardOptions): Promise<OpenDashboard> {
  let mockProvider: MockProvider | undefined;
  let gw: RunningGateway | undefined;
  let browser: Browser | undefined;
  try {
    let config: Record<string, unknown>;
    if (typeof opts.config === 'function') {
      mockProvider = await startMockProvider();
      config = opts.config(mockProvider.url);
    } else {
      config = opts.config;
    }
    // The gateway serves a dashboard built elsewhere when the test run says so (a build in progress).
    const env: NodeJS.ProcessEnv = { ...opts.env };
    if (process.env.SKYBRIDGE_DASHBOARD_DIR && env.SKYBRIDGE_DASHBOARD_DIR === undefined) env.SKYBRIDGE_DASHBOARD_DIR = process.env.SKYBRIDGE_DASHBOARD_DIR;
    gw = await startGateway(config, { env });
    await opts.setup?.(gw, mockProvider?.url);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 } });
    // Every wait of the page stretches with the machine's load, like the other helpers' waits.
    context.setDefaultTimeout(patience(15_000));
    const page = await context.newPage();
    await page.goto(`${gw.url}/${opts.path ?? ''}`);
    if (opts.login) await loginThroughForm(page, opts.login);
    const started = { gw, browser, mockProvider };
    return {
      page,
      context,
      browser,
      gw,
      mock: mockProvider?.url,
      mockProvider,
      close: async () => {
        await started.browser.close().catch(() => undefined);
        await started.gw.stop();
        await started.mockProvider?.close();
      },
    };
  } catch (err) {
    await browser?.close().catch(() => undefined);
    await gw?.stop();
    await mockProvider?.close();
    throw err;
  }
}

/** Fills the login form and waits until the dashboard's navigation is there (behind the menu at phone width). */
export async function loginThroughForm(page: Page, login: { username: string; password: string }): Promise<void> {
  await page.getByLabel('Username').fill(login.username);
  await page.getByLabel('Password').fill(login.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('nav[aria-label="Pages"]').waitFor({ state: 'attached' });
}

/** Opens a hash route afresh: a goto that changes only the hash would keep the page as it was. */
export async function reopen(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.reload();
}

interface PageGlobals {
  document: { documentElement: { scrollWidth: number; clientWidth: number } };
}

/** No sideways scroll: the document is no wider than the viewport. `what` names the page in the failure. */
export async function assertNoHorizontalOverflow(page: Page, what?: string): Promise<void> {
  // Runs in the page: it names `globalThis` itself (the tests' typings have no DOM).
  const { scroll, client } = await page.evaluate(() => {
    const d = (globalThis as unknown as PageGlobals).document.documentElement;
    return { scroll: d.scrollWidth, client: d.clientWidth };
  });
  assert.ok(scroll <= client, `${what ? `${what}: ` : ''}page is ${scroll}px wide in a ${client}px viewport`);
}

/**
 * A page in a new context of `browser` (its own viewport, cookies and storage), opened at `url` and
 * logged in when asked; the context is closed after `fn`, whatever happens.
 */
export async function inNewContext<T>(
  browser: Browser,
  opts: { url: string; viewport?: { width: number; height: number }; login?: { username: string; password: string }; timeoutMs?: number },
  fn: (page: Page) => Promise<T>,
): Promise<T> {
  const context = await browser.newContext(opts.viewport ? { viewport: opts.viewport } : {});
  if (opts.timeoutMs !== undefined) context.setDefaultTimeout(opts.timeoutMs);
  try {
    const page = await context.newPage();
    await page.goto(opts.url);
    if (opts.login) await loginThroughForm(page, opts.login);
    return await fn(page);
  } finally {
    await context.close();
  }
}
