// Regenerates docs/screenshots/<page>.png: starts a gateway with a demo configuration in front of the
// mock provider, sends it some traffic (several models, virtual keys, a few errors, realtime
// sessions: one ended, one open while the pages are shot, and an open Responses WebSocket connection), then opens every
// page of dashboard/src/pages/registry.ts in Debian's Chromium at 1280×800 (and the overview once at
// phone width). A page that fails to render is still shot and reported, never stops the run.
//
//   node scripts/screenshots.ts [--out docs/screenshots]
//
// SKYBRIDGE_DASHBOARD_DIR serves a dashboard built elsewhere (default: the committed dashboard/dist).
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openSqliteStore } from '../proxy/src/logs/sqlite-store.ts';
import type { LogRecord } from '../proxy/src/logs/record.ts';
import { launchChromium } from '../test/helpers/browser.ts';
import { startGateway } from '../test/helpers/gateway.ts';
import { mockProviders } from '../test/helpers/providers.ts';
import { startMockProvider } from '../test/mock-provider/server.ts';
import { WebSocket, type RawData } from 'ws';

const root = resolve(import.meta.dirname, '..');
const at = process.argv.indexOf('--out');
const out = resolve(at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : join(root, 'docs', 'screenshots'));

/** The pages in navigation order, read from the registry's source (it imports TSX, so not importable here). */
function registryPages(): { path: string; title: string }[] {
  const src = readFileSync(join(root, 'dashboard', 'src', 'pages', 'registry.ts'), 'utf8');
  return [...src.matchAll(/\{\s*path:\s*'([^']+)',\s*title:\s*'([^']+)'/g)].map((m) => ({ path: m[1]!, title: m[2]! }));
}

const VK_SEARCH = 'sk-bf-demo-search-7a1c9e2f4b6d8a0c';
const VK_SUPPORT = 'sk-bf-demo-support-3e5f7a9b1c2d4e6f';

const allow = (providers: string[]) => providers.map((provider) => ({ provider, allowed_models: ['*'], key_ids: ['*'], weight: 1 }));

function demoConfig(mockUrl: string): Record<string, unknown> {
  return {
    providers: mockProviders(mockUrl),
    client: { enable_logging: true },
    governance: {
      budgets: [{ id: 'team-monthly', max_limit: 250, reset_duration: '1M' }],
      rate_limits: [{ id: 'std', request_max_limit: 600, request_reset_duration: '1m', token_max_limit: 200000, token_reset_duration: '1m' }],
      customers: [{ id: 'acme', name: 'Acme' }],
      teams: [{ id: 'search', name: 'Search', customer_id: 'acme', budget_id: 'team-monthly' }],
      virtual_keys: [
        { id: 'search-prod', name: 'search-prod', value: VK_SEARCH, team_id: 'search', rate_limit_id: 'std', provider_configs: allow(['openai', 'anthropic', 'gemini']) },
        { id: 'support-bot', name: 'support-bot', value: VK_SUPPORT, provider_configs: allow(['openai', 'anthropic']) },
      ],
      routing_rules: [{ name: 'premium', cel_expression: 'headers["x-tier"] == "premium"', targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }] }],
    },
  };
}

const PROMPTS = ['Summarise this support ticket', 'Translate "good morning" to French', 'Write a haiku about gateways', 'What is the capital of Japan?', 'Explain retries with backoff', 'List three prime numbers'];
const MODELS = ['openai/gpt-4o', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-flash'];

async function traffic(url: string, inject: (f: Record<string, unknown>) => void): Promise<void> {
  const send = async (i: number, headers: Record<string, string> = {}) => {
    const body = { model: MODELS[i % MODELS.length], messages: [{ role: 'user', content: `${PROMPTS[i % PROMPTS.length]} (#${i})` }], stream: i % 5 === 0 };
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    await res.arrayBuffer();
  };
  for (let i = 0; i < 36; i++) {
    const headers: Record<string, string> = i % 3 === 0 ? { 'x-bf-vk': VK_SEARCH } : i % 3 === 1 ? { 'x-bf-vk': VK_SUPPORT } : {};
    if (i % 9 === 4) headers['x-tier'] = 'premium';
    if (i % 11 === 7) inject({ status: 503, message: 'upstream overloaded' });
    await send(i, headers);
  }
}

/**
 * Realtime sessions for the Realtime sessions page: one that has ended (two turns) and one left
 * open (one turn) while the pages are shot; the caller closes the open one.
 */
async function realtimeSessions(url: string): Promise<WebSocket> {
  const open = () =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/realtime?model=openai/gpt-realtime`);
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  const turn = (ws: WebSocket, text: string) =>
    new Promise<void>((resolve) => {
      const onMessage = (data: RawData) => {
        if ((JSON.parse((data as Buffer).toString()) as { type?: string }).type !== 'response.done') return;
        ws.off('message', onMessage);
        resolve();
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
      ws.send(JSON.stringify({ type: 'response.create' }));
    });
  const ended = await open();
  await turn(ended, 'What is on my calendar today?');
  await turn(ended, 'Move the 3 pm meeting to 4 pm');
  ended.close();
  const live = await open();
  await turn(live, 'Read me the latest support ticket');
  return live;
}

/**
 * A Responses API WebSocket connection (transport responses_ws on the Realtime sessions page) with
 * one response answered, left open while the pages are shot; the caller closes it.
 */
async function responsesConnection(url: string): Promise<WebSocket> {
  const ws = await new Promise<WebSocket>((resolve, reject) => {
    const s = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/responses`);
    s.once('open', () => resolve(s));
    s.once('error', reject);
  });
  await new Promise<void>((resolve) => {
    const onMessage = (data: RawData) => {
      if ((JSON.parse((data as Buffer).toString()) as { type?: string }).type !== 'response.completed') return;
      ws.off('message', onMessage);
      resolve();
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ type: 'response.create', model: 'openai/gpt-4o-mini', input: 'Summarise the open tickets' }));
  });
  return ws;
}

/**
 * A day of earlier requests written straight into the gateway's SQLite log store before it starts,
 * so the overview's charts show a day's shape rather than one spike (HTTP traffic is stamped "now").
 */
async function seedHistory(appDir: string, now = Date.now()): Promise<void> {
  const store = await openSqliteStore(join(appDir, 'logs.db'));
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const targets = [
    { provider: 'openai', model: 'gpt-4o', price: 0.000007 },
    { provider: 'openai', model: 'gpt-4o-mini', price: 0.0000005 },
    { provider: 'anthropic', model: 'claude-sonnet-4-5', price: 0.000009 },
    { provider: 'gemini', model: 'gemini-2.5-flash', price: 0.0000015 },
  ];
  const keys = [{ virtual_key_id: 'search-prod', virtual_key_name: 'search-prod' }, { virtual_key_id: 'support-bot', virtual_key_name: 'support-bot' }, {}];
  const records: LogRecord[] = [];
  for (let m = 24 * 60; m > 2; m -= 4) {
    // Busier in the (UTC) working day, with some noise.
    const hour = new Date(now - m * 60_000).getUTCHours();
    const n = Math.round((hour >= 8 && hour <= 18 ? 3 : 1) * rand() * 3);
    for (let k = 0; k < n; k++) {
      const t = targets[Math.floor(rand() * targets.length)]!;
      const failed = rand() < 0.06;
      const prompt = 20 + Math.floor(rand() * 600);
      const completion = failed ? 0 : 10 + Math.floor(rand() * 400);
      records.push({
        id: `demo-${m}-${k}`,
        timestamp: now - m * 60_000 - Math.floor(rand() * 240_000),
        object: 'chat.completion',
        provider: t.provider,
        model: t.model,
        requested_model: `${t.provider}/${t.model}`,
        ...keys[Math.floor(rand() * keys.length)],
        status: failed ? 'error' : 'success',
        ...(failed && { error_details: { status: 503, message: 'upstream overloaded', type: 'api_error' } }),
        prompt_tokens: prompt,
        completion_tokens: completion,
        ...(failed ? {} : { cost: (prompt + completion) * t.price }),
        latency: Math.round(200 + rand() * 900 + (t.provider === 'anthropic' ? 400 : 0)),
        input_content: JSON.stringify({ model: `${t.provider}/${t.model}`, messages: [{ role: 'user', content: PROMPTS[Math.floor(rand() * PROMPTS.length)] }] }),
      });
    }
  }
  await store.insert(records);
  await store.close();
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const mock = await startMockProvider({ latencyMs: 15 });
  const env: NodeJS.ProcessEnv = {};
  if (process.env.SKYBRIDGE_DASHBOARD_DIR) env.SKYBRIDGE_DASHBOARD_DIR = process.env.SKYBRIDGE_DASHBOARD_DIR;
  const appDir = mkdtempSync(join(tmpdir(), 'skybridge-screenshots-'));
  await seedHistory(appDir);
  const gw = await startGateway(demoConfig(mock.url), { env, appDir });
  const browser = await launchChromium();
  const problems: string[] = [];
  let session: WebSocket | undefined;
  let connection: WebSocket | undefined;
  try {
    await traffic(gw.url, (f) => mock.inject(f as never));
    session = await realtimeSessions(gw.url);
    connection = await responsesConnection(gw.url);
    // The log writer batches: give it a moment so the charts and tables have the traffic.
    await new Promise((r) => setTimeout(r, 1500));

    const shoot = async (name: string, hash: string, viewport: { width: number; height: number }, prepare?: (page: import('playwright-core').Page) => Promise<void>) => {
      const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
      const page = await context.newPage();
      page.on('pageerror', (e) => problems.push(`${name}: ${e.message}`));
      try {
        await page.goto(`${gw.url}/${hash}`);
        await page.locator('main h1').first().waitFor({ timeout: 10_000 });
        if (prepare) await prepare(page);
        // Until the page's data has come in (no "Loading…" left), then a moment for the last paint.
        await page.waitForFunction(() => !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('.loading'), undefined, { timeout: 10_000 }).catch(() => problems.push(`${name}: still loading after 10 s`));
        await page.waitForTimeout(300);
      } catch (e) {
        problems.push(`${name}: ${(e as Error).message.split('\n')[0]}`);
      }
      const file = join(out, `${name}.png`);
      await page.screenshot({ path: file });
      await context.close();
      console.log(`wrote ${file}`);
    };

    const desktop = { width: 1280, height: 800 };
    for (const p of registryPages()) await shoot(p.path, `#/${p.path}`, desktop);
    await shoot('logs-detail', '#/logs', desktop, async (page) => {
      await page.getByRole('link', { name: /open request/ }).first().click();
      await page.getByRole('heading', { name: 'Request detail' }).waitFor();
      await page.getByText('Summary').first().waitFor();
    });
    await shoot('overview-phone', '#/overview', { width: 390, height: 844 });
  } finally {
    session?.close();
    connection?.close();
    await browser.close();
    await gw.stop();
    await mock.close();
  }
  if (problems.length) console.warn(`some pages had problems (screenshots were still written):\n  ${problems.join('\n  ')}`);
}

await main();
