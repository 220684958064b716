// The Playground and Models & pricing pages in Debian's Chromium against a real gateway (default
// SQLite logs) and the mock provider: a request sent as a virtual key chosen in the page streams in
// and shows its tokens, cost, time to first token and routing decision (a rule and its fallback),
// through chat completions or the Responses API; the overview breaks the key's usage down by key and team;
// a model the key does not allow is refused with the gateway's message; the prices in force say
// built-in, override or none; a price set in the page changes what the next request (official
// OpenAI SDK) costs in its log record, and removing it restores the built-in price. axe-core finds
// no serious or critical violation on either page at 1280 and 390 px, with no sideways scroll.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { assertNoHorizontalOverflow, openDashboard, reopen as visit, type OpenDashboard } from '../helpers/browser.ts';
import { axeContext, seriousViolations } from '../helpers/axe.ts';
import { mockProviders } from '../helpers/providers.ts';
import { eventually } from '../helpers/patience.ts';
import type { LogEntry, LogSearch } from '../../proxy/src/api/answers.ts';

const T = { timeout: 120_000 };
const VK = { id: 'vk-play', name: 'play', value: 'sk-bf-browser-playground-0123456789' };

describe('playground and models & pricing', () => {
  let d: OpenDashboard;
  let sdk: OpenAI;
  before(async () => {
    d = await openDashboard({
      config: (u) => ({
        providers: mockProviders(u),
        client: { enforce_auth_on_inference: true },
        governance: {
          teams: [{ id: 'team-play', name: 'Play team' }],
          virtual_keys: [{ ...VK, team_id: 'team-play', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini', 'house-model-1'], key_ids: ['*'], weight: 1 }] }],
          routing_rules: [{ id: 'house', name: 'house model to gpt-4o', cel_expression: 'model == "house-model-1"', targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }], fallbacks: ['openai/gpt-4o-mini'] }],
        },
      }),
      path: '#/playground',
    });
    sdk = new OpenAI({ baseURL: `${d.gw.url}/v1`, apiKey: VK.value, maxRetries: 0 });
  });
  after(() => d?.close());

  const logs = async (query: string): Promise<LogEntry[]> => ((await (await fetch(`${d.gw.url}/api/logs?${query}`)).json()) as LogSearch).logs;

  test('the playground streams an answer as the chosen key and shows its tokens, cost, TTFT and routing decision', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/playground`);
    await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();
    const key = page.getByLabel('Virtual key');
    await key.locator('option', { hasText: 'play' }).waitFor({ state: 'attached' });
    assert.equal(await key.inputValue(), VK.id);
    await page.getByLabel('Model').fill('openai/house-model-1');
    await page.getByLabel('Message').fill('browser playground marker');
    await page.getByRole('button', { name: 'Send' }).click();
    const details = page.getByRole('region', { name: 'Answer details' });
    await details.waitFor();
    assert.ok((await page.getByTestId('answer-text').innerText()).trim().length > 0, 'the answer text is shown');
    assert.match(await details.getByTestId('tokens').innerText(), /^\d+ in · \d+ out · \d+ total/);
    // A busy machine can take over a second to the first token: the page then says seconds.
    assert.match(await details.getByTestId('ttft').innerText(), /^(\d+ ms|\d+(\.\d+)? s)$/);
    assert.match(await details.getByTestId('latency').innerText(), /ms total|s total/);
    assert.equal(await details.getByTestId('routing-rule').innerText(), 'house model to gpt-4o');
    assert.equal(await details.getByTestId('answered-by').innerText(), 'openai/gpt-4o');
    assert.match(await details.getByTestId('targets').innerText(), /^openai\/gpt-4o then openai\/gpt-4o-mini$/);
    const cost = await details.getByTestId('cost').innerText();
    assert.match(cost, /^\$0\.0\d+$/);
    // What the page shows is the stored record's: the one request of this key, streamed, at that cost.
    // (Records reach the store in batches, up to a second after the answer.)
    let record!: LogEntry;
    await eventually(async () => {
      [record] = await logs(`virtual_key_ids=${VK.id}&limit=5`);
      assert.ok(record, 'the playground request is not in the logs yet');
    });
    assert.equal(record.stream, true);
    assert.equal(record.routing_rule_name, 'house model to gpt-4o');
    assert.equal(`$${record.cost!.toFixed(6)}`, cost);
    await details.getByRole('link', { name: 'Open the log record' }).click();
    await page.getByRole('heading', { level: 1, name: 'Request detail' }).waitFor();
    assert.match(page.url(), new RegExp(`#/logs/${record.id}$`));
  });

  test('the playground sends a Responses API request, streamed, and shows its answer, tokens, cost and cache state', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/playground`);
    await page.getByLabel('Virtual key').locator('option', { hasText: 'play' }).waitFor({ state: 'attached' });
    await page.getByRole('combobox', { name: /^API/ }).selectOption('responses');
    await page.getByLabel('Model').fill('openai/gpt-4o-mini');
    await page.getByLabel('Message').fill('responses playground marker');
    await page.getByRole('button', { name: 'Send' }).click();
    const details = page.getByRole('region', { name: 'Answer details' });
    await details.waitFor();
    assert.ok((await page.getByTestId('answer-text').innerText()).trim().length > 0, 'the answer text is shown');
    assert.equal(await details.getByTestId('answered-by').innerText(), 'openai/gpt-4o-mini');
    assert.match(await details.getByTestId('tokens').innerText(), /^\d+ in · \d+ out · \d+ total/);
    assert.match(await details.getByTestId('ttft').innerText(), /^(\d+ ms|\d+(\.\d+)? s)$/, 'streamed: a time to first token');
    assert.match(await details.getByTestId('cost').innerText(), /^\$0\.\d+$/);
    assert.equal(await details.getByTestId('cache').innerText(), 'not cached (no response cache)');
    // The stored record is a streamed Responses API request of this key.
    await eventually(async () => {
      const [record] = await logs(`virtual_key_ids=${VK.id}&models=gpt-4o-mini&limit=1`);
      assert.ok(record, 'the responses request is not in the logs yet');
      assert.match(record.object, /^response/);
      assert.equal(record.stream, true);
    });
  });

  test("the overview breaks the key's requests down by virtual key (with its name) and by team", T, async () => {
    const { page } = d;
    await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'overview by key' }] });
    await eventually(async () => assert.ok((await logs(`virtual_key_ids=${VK.id}&limit=1`)).length > 0));
    await visit(page, `${d.gw.url}/#/overview?by=virtual_key`);
    await page.getByRole('table', { name: 'Usage by virtual key' }).getByRole('cell', { name: `play (${VK.id})` }).waitFor();
    await page.getByLabel('Break down by').selectOption('team');
    await page.waitForURL(/by=team/);
    await page.getByRole('table', { name: 'Usage by team' }).getByRole('cell', { name: 'team-play' }).waitFor();
  });

  test('a model the key does not allow is refused with the gateway message', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/playground`);
    await page.getByLabel('Virtual key').locator('option', { hasText: 'play' }).waitFor({ state: 'attached' });
    await page.getByLabel('Model').fill('openai/gpt-4.1');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('alert').filter({ hasText: "model 'gpt-4.1' of provider 'openai' is not allowed by virtual key 'play'" }).waitFor();
    assert.equal(await page.getByRole('region', { name: 'Answer details' }).count(), 0);
  });

  test('models & pricing: built-in, override and none; a price set in the page changes the next request\'s cost, removing it restores the built-in one', T, async () => {
    const { page } = d;
    await visit(page, `${d.gw.url}/#/models`);
    const table = page.getByRole('table', { name: 'Prices in force' });
    await table.getByRole('row').nth(1).waitFor();
    // A configured model with no price says so.
    await page.getByRole('combobox', { name: /^Source/ }).selectOption('none');
    const house = table.getByRole('row').filter({ hasText: 'house-model-1' });
    await house.getByText('none: charged $0').waitFor();
    await page.getByRole('status').filter({ hasText: /have no price and are charged \$0/ }).waitFor();
    // gpt-4o at its built-in price, found by provider and model.
    await page.getByRole('combobox', { name: /^Source/ }).selectOption('');
    await page.getByRole('combobox', { name: /^Provider/ }).selectOption('openai');
    await page.getByRole('searchbox', { name: /^Model/ }).fill('gpt-4o');
    const gpt = table.getByRole('row').filter({ has: page.getByText('gpt-4o', { exact: true }) });
    await gpt.getByText('built-in').waitFor();
    assert.match(await gpt.innerText(), /\$2\.5\s+\$10\s+\$1\.25/);

    // Set in place: a bad price names its field, a good one applies.
    await gpt.getByRole('button', { name: 'Set price of openai/gpt-4o' }).click();
    const dialog = page.getByRole('dialog', { name: 'Price of openai/gpt-4o' });
    assert.equal(await dialog.getByLabel('Input $/1M tokens').inputValue(), '2.5');
    await dialog.getByLabel('Input $/1M tokens').fill('-1');
    await dialog.getByRole('button', { name: 'Add price override' }).click();
    await dialog.locator('.field-invalid').filter({ hasText: 'Input $/1M tokens' }).getByRole('alert').waitFor();
    await dialog.getByLabel('Input $/1M tokens').fill('10');
    await dialog.getByLabel('Output $/1M tokens').fill('20');
    await dialog.getByRole('button', { name: 'Add price override' }).click();
    await dialog.waitFor({ state: 'detached' });
    await gpt.getByText('override', { exact: true }).waitFor();
    assert.match(await gpt.innerText(), /set here/);
    assert.match(await gpt.innerText(), /\$10\s+\$20/);

    // The next request, with the official SDK, is charged the new price.
    const marker = 'priced by the page';
    const answer = await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: marker }] });
    const usage = answer.usage!;
    const expected = usage.prompt_tokens * 10e-6 + usage.completion_tokens * 20e-6;
    await eventually(async () => {
      const [r] = await logs(`content_search=${encodeURIComponent(marker)}&limit=1`);
      assert.ok(r, 'logged');
      assert.ok(Math.abs(r.cost! - expected) < 1e-12, `cost ${r.cost}, expected ${expected}`);
    }, 5000);

    // Removed: back to the built-in price.
    await gpt.getByRole('button', { name: 'Remove override of openai/gpt-4o' }).click();
    await page.getByRole('dialog', { name: /Remove the price override/ }).getByRole('button', { name: 'Remove override' }).click();
    await gpt.getByText('built-in').waitFor();
  });

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    test(`axe-core finds no serious or critical violation on the playground (with an answer) and models & pricing at ${viewport.width} px`, T, async () => {
      const context = await axeContext(d.browser, viewport);
      try {
        const page = await context.newPage();
        await visit(page, `${d.gw.url}/#/playground`);
        await page.getByLabel('Virtual key').locator('option', { hasText: 'play' }).waitFor({ state: 'attached' });
        await page.getByLabel('Model').fill('openai/gpt-4o');
        await page.getByRole('button', { name: 'Send' }).click();
        await page.getByRole('region', { name: 'Answer details' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], '#/playground');
        await assertNoHorizontalOverflow(page);
        await visit(page, `${d.gw.url}/#/models`);
        await page.getByRole('table', { name: 'Prices in force' }).getByRole('row').nth(1).waitFor();
        assert.deepEqual(await seriousViolations(page), [], '#/models');
        await assertNoHorizontalOverflow(page);
        if (viewport.width === 390) {
          // Rows are cards: the action stays on screen.
          const action = page.getByRole('button', { name: 'Set price of openai/gpt-4o', exact: true });
          const box = (await action.boundingBox())!;
          assert.ok(box.x >= 0 && box.x + box.width <= 390, `the action spans ${box.x}..${box.x + box.width}`);
        }
      } finally {
        await context.close();
      }
    });
  }
});
