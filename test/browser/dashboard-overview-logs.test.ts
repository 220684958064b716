// The overview and the logs page in Debian's Chromium against a real gateway (the default SQLite
// logs) fed by the official OpenAI SDK: uPlot charts over the last hour by default, broken down by
// provider or model, updating live as requests are made; the logs page's status code, provider,
// cache and TTFT columns, rows that open their record, folded filters, a CSV export downloaded as a
// user would; phone width (rows become cards, actions stay in view), the keyboard, and axe-core
// (no serious or critical violation) on each of these pages. Also a first visit without a password,
// and the latency chart over sparse traffic drawn as one continuous line (read from its canvas).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { assertNoHorizontalOverflow, inNewContext, launchChromium, openDashboard, reopen as visit, type OpenDashboard } from '../helpers/browser.ts';
import { axeContext, seriousViolations } from '../helpers/axe.ts';
import { startGateway as startInProcess, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { eventually, patience } from '../helpers/patience.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import type { LogRecord } from '../../proxy/src/logs/record.ts';

const T = { timeout: 90_000 };
/**
 * Every chart of the overview has drawn (uPlot's canvases). A function, not a string: Playwright
 * polls a string predicate with eval inside the page, which the dashboard's CSP refuses whenever the
 * first check finds the charts not drawn yet (a loaded machine).
 */
const CHARTS_DRAWN = (): boolean =>
  (globalThis as unknown as { document: { querySelectorAll(selector: string): { length: number } } }).document.querySelectorAll('.uplot canvas').length >= 7;

describe('overview and logs', () => {
  let d: OpenDashboard;
  let sdk: OpenAI;
  before(async () => {
    // No client.enable_logging: logging is on by default.
    d = await openDashboard({ config: (u) => ({ providers: mockProviders(u) }), path: '#/overview' });
    sdk = new OpenAI({ baseURL: `${d.gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'overview one' }] });
    await sdk.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages: [{ role: 'user', content: 'overview two' }] });
    d.mockProvider!.inject({ status: 500, message: 'upstream down' });
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'fails' }] }).catch(() => undefined);
    // Records reach the store in batches, up to a second after their answers: the pages read the store.
    await eventually(async () => {
      const stored = (await (await fetch(`${d.gw.url}/api/logs?limit=10`)).json()) as { logs: unknown[] };
      assert.equal(stored.logs.length, 3);
    });
  });
  after(() => d?.close());

  test('the overview defaults to the last hour and draws its charts with uPlot, errors split by whose', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/overview`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(await page.getByLabel('Time range').inputValue(), '1h');
    const totals = page.getByLabel('Totals, last hour');
    await totals.getByText('Requests').waitFor();
    await page.waitForFunction(CHARTS_DRAWN);
    assert.match(await totals.innerText(), /Requests\s+3/);
    assert.match(await totals.innerText(), /client 0 · upstream 1 · gateway 0/);
    const byProvider = page.getByRole('table', { name: 'Usage by provider' });
    await byProvider.getByRole('link', { name: 'openai' }).waitFor();
    assert.match(await byProvider.getByRole('row').filter({ hasText: 'openai' }).innerText(), /openai\s+2\s+0\s+1\s+0/);
    // Break down by model: the table follows, and the choice is in the link.
    await page.getByLabel('Break down by').selectOption('model');
    await page.waitForURL(/by=model/);
    await page.getByRole('table', { name: 'Usage by model' }).getByRole('link', { name: 'gemini-2.5-flash' }).waitFor();
    // The other ranges are there, custom too.
    const ranges = await page.getByLabel('Time range').locator('option').allTextContents();
    assert.deepEqual(ranges, ['Last 15 minutes', 'Last hour', 'Last 24 hours', 'Last 7 days', 'Last 30 days', 'Custom range']);
    await page.getByLabel('Time range').selectOption('custom');
    await page.getByLabel('From').waitFor();
  });

  test('the overview updates live when a request is made, without Refresh', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/overview`);
    const totals = page.getByLabel('Totals, last hour');
    await totals.getByText('Requests').waitFor();
    await page.getByRole('status').filter({ hasText: /^Live( ·|$)/ }).waitFor();
    const before = Number(/Requests\s+(\d+)/.exec(await totals.innerText())![1]);
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'live overview marker' }] });
    // No reload, no Refresh: the socket's log event brings the new total.
    await eventually(async () => assert.match(await totals.innerText(), new RegExp(`Requests\\s+${before + 1}\\b`)), 20_000);
  });

  test('a chart is keyboard navigable and reads its exact values', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/overview`);
    const chart = page.getByRole('group', { name: /Requests by provider chart/ });
    await chart.waitFor();
    await chart.focus();
    await page.keyboard.press('End');
    const reading = page.getByRole('figure', { name: 'Requests by provider' }).locator('[aria-live]');
    await reading.filter({ hasText: /openai \d+/ }).waitFor();
  });

  test('the pointer over a chart shows the exact values of the bucket under it (the tooltip legend)', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/overview`);
    const figure = page.getByRole('figure', { name: 'Requests by provider' });
    await figure.locator('.u-over').waitFor();
    // The numbers have arrived (the chart is drawn empty first).
    await page.getByLabel('Totals, last hour').filter({ hasText: /Requests\s*[1-9]/ }).waitFor();
    // The requests of this file are in the last buckets, at the plot's right edge: the pointer moves
    // left from there, a fraction of a bucket at a time, until the legend shows openai's count.
    const over = figure.locator('.u-over');
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    const legend = figure.locator('.u-legend');
    let text = '';
    for (let i = 0; i < 480 && !/openai\s*[1-9]/.test(text); i++) {
      await page.mouse.move(box.x + box.width - 1 - (i * box.width) / 480, box.y + box.height / 2);
      text = await legend.innerText();
    }
    // The bucket's time with its date, and openai's exact count there.
    assert.match(text, /[A-Z][a-z]{2} \d{1,2} \d{2}:\d{2}/, text);
    assert.match(text, /openai\s*[1-9]/, text);
  });

  test('the logs page: status code, provider, TTFT and cache columns; a row opens its record; filters fold away', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/logs`);
    const table = page.getByRole('table', { name: 'Request logs' });
    await table.getByRole('row').nth(1).waitFor();
    const headers = await table.locator('thead th').allTextContents();
    for (const h of ['Code', 'Provider', 'TTFT', 'Cache']) assert.ok(headers.includes(h), `column ${h} in ${headers.join(', ')}`);
    const failed = table.getByRole('row').filter({ hasText: '500' });
    assert.equal(await failed.count(), 1, 'the upstream failure shows its status code');
    assert.equal(await page.getByLabel('Search content').isVisible(), false, 'filters folded');
    const toggle = page.getByRole('button', { name: 'Filters' });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await toggle.click();
    await page.getByLabel('Search content').waitFor();
    await page.getByRole('button', { name: 'Hide filters' }).click();
    // A click anywhere on the row (here its model cell) opens the record.
    await failed.getByText('openai/gpt-4o').click();
    await page.waitForURL(/#\/logs\/[^?]+$/);
    await page.getByRole('heading', { level: 1, name: 'Request detail' }).waitFor();
    await page.getByText('500 (upstream error)').waitFor();
  });

  test('at 1280×800 the logs page shows at least 14 rows without scrolling (the issue found about 8)', T, async () => {
    // The complaint was about 8: enough records to fill the screen, sent as a client would.
    await Promise.all(Array.from({ length: 20 }, (_, i) => sdk.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `density ${i}` }] })));
    await inNewContext(d.browser, { url: `${d.gw.url}/#/logs`, viewport: { width: 1280, height: 800 } }, async (page) => {
      // The first visit's set-a-password hint is dismissed once, as a user would.
      await page.getByRole('region', { name: 'Protect this dashboard' }).getByRole('button', { name: 'Got it' }).click();
      const rows = page.getByRole('table', { name: 'Request logs' }).locator('tbody tr');
      await eventually(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click().catch(() => undefined);
        assert.ok((await rows.count()) >= 20, `${await rows.count()} rows listed`);
      }, 10_000);
      let inView = 0;
      for (const box of await Promise.all((await rows.all()).map((r) => r.boundingBox()))) if (box && box.y >= 0 && box.y + box.height <= 800) inView++;
      assert.ok(inView >= 14, `${inView} rows fully in view`);
    });
  });

  test('Export CSV downloads the current search', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/logs?providers=gemini`);
    await page.getByRole('table', { name: 'Request logs' }).getByRole('row').nth(1).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    assert.match(download.suggestedFilename(), /^skybridge-logs-.*\.csv$/);
    const lines = readFileSync((await download.path())!, 'utf8').trimEnd().split('\r\n');
    assert.equal(lines.length, 2, 'the header and the one gemini request');
    assert.match(lines[1]!, /,gemini,gemini-2\.5-flash,/);
  });

  test('Export JSON lines downloads the current search, one record a line', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/logs?providers=gemini`);
    await page.getByRole('table', { name: 'Request logs' }).getByRole('row').nth(1).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export JSON lines' }).click()]);
    assert.match(download.suggestedFilename(), /^skybridge-logs-.*\.jsonl$/);
    const records = readFileSync((await download.path())!, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { provider?: string; model?: string });
    assert.deepEqual(records.map((r) => [r.provider, r.model]), [['gemini', 'gemini-2.5-flash']]);
  });

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    test(`axe-core finds no serious or critical violation on the overview, the logs and a record at ${viewport.width} px`, T, async () => {
      const context = await axeContext(d.browser, viewport);
      try {
        const page = await context.newPage();
        for (const [hash, ready] of [
          ['#/overview', () => page.waitForFunction(CHARTS_DRAWN)],
          ['#/logs', () => page.getByRole('table', { name: 'Request logs' }).getByRole('row').nth(1).waitFor()],
        ] as const) {
          await visit(page, `${d.gw.url}/${hash}`);
          await ready();
          assert.deepEqual(await seriousViolations(page), [], hash);
          await assertNoHorizontalOverflow(page);
        }
        await page.getByRole('table', { name: 'Request logs' }).getByRole('link', { name: /open request/ }).first().click();
        await page.getByRole('heading', { level: 1, name: 'Request detail' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'a record');
      } finally {
        await context.close();
      }
    });
  }

  test('at 390 px the log rows are cards and the export stays in view', T, async () => {
    await inNewContext(d.browser, { url: `${d.gw.url}/#/logs`, viewport: { width: 390, height: 844 } }, async (page) => {
      const row = page.getByRole('table', { name: 'Request logs' }).getByRole('row').nth(1);
      await row.waitFor();
      const box = (await row.boundingBox())!;
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `row spans ${box.x}..${box.x + box.width}`);
      assert.ok(box.height > 150, 'a card: one line per field');
      const exportBox = (await page.getByRole('link', { name: 'Export CSV' }).boundingBox())!;
      assert.ok(exportBox.x + exportBox.width <= 390, 'the export link is on screen');
      await assertNoHorizontalOverflow(page);
    });
  });

  test('the first visit without a password says how to set one, until dismissed', T, async () => {
    await inNewContext(d.browser, { url: `${d.gw.url}/#/overview` }, async (page) => {
      const hint = page.getByRole('region', { name: 'Protect this dashboard' });
      await hint.waitFor();
      assert.match(await hint.innerText(), /auth_config.*admin_password/);
      await hint.getByRole('button', { name: 'Got it' }).click();
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      assert.equal(await hint.count(), 0);
    });
  });
});

/**
 * Which columns of a chart's plot area hold a drawn line: a pixel well away from grey (the grid and
 * axes are grey, the series are colours of PALETTE). A string, as the tests' typings have no DOM.
 */
const LINE_COLUMNS = (title: string) => `(() => {
  const fig = document.querySelector('figure[aria-label=${JSON.stringify(title)}]');
  const canvas = fig.querySelector('.uplot canvas');
  const over = fig.querySelector('.u-over');
  const k = canvas.width / canvas.clientWidth;
  const x0 = Math.round(over.offsetLeft * k), y0 = Math.round(over.offsetTop * k);
  const w = Math.round(over.clientWidth * k), h = Math.round(over.clientHeight * k);
  const px = canvas.getContext('2d').getImageData(x0, y0, w, h).data;
  const cols = [];
  for (let x = 0; x < w; x++) {
    let drawn = false;
    for (let y = 0; y < h && !drawn; y++) {
      const i = (y * w + x) * 4;
      drawn = px[i + 3] > 0 && Math.max(px[i], px[i + 1], px[i + 2]) - Math.min(px[i], px[i + 1], px[i + 2]) > 60;
    }
    cols.push(drawn);
  }
  return cols;
})()`;

describe('the latency chart over sparse traffic', () => {
  let mock: MockProvider;
  let gw: InProcessGateway;
  let browser: Browser;
  before(async () => {
    mock = await startMockProvider();
    gw = await startInProcess({ providers: mockProviders(mock.url) });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await mock?.close();
  });

  test('requests in two buckets 40 minutes apart are joined by one continuous latency line', T, async () => {
    // One request now (the official SDK), one 40 minutes ago (written to the store as the logging
    // stage writes records: traffic cannot be sent into the past), and nothing in between.
    const sdk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'sparse now' }] });
    const earlier: LogRecord = { id: 'sparse-earlier', timestamp: Date.now() - 40 * 60_000, object: 'chat.completion', status: 'success', status_code: 200, stream: false, latency: 180, provider: 'openai', model: 'gpt-4o', number_of_retries: 0, fallback_index: 0 };
    assert.ok(gw.gateway.logs!.writer.enqueue(earlier));
    const end = new Date(Date.now() + 60_000).toISOString();
    const start = new Date(Date.now() - 3600_000).toISOString();
    // The premise: the API's latency series has values in two buckets far apart and none between.
    await eventually(async () => {
      const d = (await (await fetch(`${gw.url}/api/logs/breakdown?by=provider&start_time=${start}&end_time=${end}`)).json()) as { series: { p50_latency: (number | null)[] } };
      const at = d.series.p50_latency.flatMap((v, i) => (v === null ? [] : [i]));
      assert.equal(at.length, 2, JSON.stringify(d.series.p50_latency));
      assert.ok(at[1]! - at[0]! > 10, `buckets ${at.join(', ')}`);
      assert.ok(d.series.p50_latency.slice(at[0]! + 1, at[1]).every((v) => v === null));
    });

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      context.setDefaultTimeout(patience(15_000));
      await page.goto(`${gw.url}/#/overview`);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.waitForFunction(CHARTS_DRAWN);
      await eventually(async () => {
        const cols = (await page.evaluate(LINE_COLUMNS('Latency p50, p95, p99'))) as boolean[];
        const first = cols.indexOf(true);
        const last = cols.lastIndexOf(true);
        // 40 of the hour's 60 minutes apart: the line runs across about two thirds of the plot ...
        assert.ok(first >= 0 && last - first > cols.length / 2, `drawn from column ${first} to ${last} of ${cols.length}`);
        // ... with no gap: every column between the two requests has the line.
        const gaps = cols.slice(first, last + 1).flatMap((c, i) => (c ? [] : [first + i]));
        assert.deepEqual(gaps, [], `columns without the line between ${first} and ${last}`);
      });
    } finally {
      await context.close();
    }
  });
});
