// The log detail of an agent request in a real Chromium: a request whose MCP tool the gateway ran
// (two model turns, a real stdio MCP server) is one row of the logs list, and its detail lists the
// two turns (child records), each linking to its own detail, which names the parent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/patience.ts';
import { apiClient } from '../helpers/api.ts';
import { openDashboard, type OpenDashboard } from '../helpers/browser.ts';
import { mockProviders } from '../helpers/providers.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;
const T = { timeout: 120_000 };

describe('dashboard: an agent request and its turns', () => {
  let d: OpenDashboard;
  before(async () => {
    d = await openDashboard({
      config: (u) => ({
        providers: mockProviders(u),
        client: { enable_logging: true },
        mcp: {
          client_configs: [
            { name: 'local', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] }, tools_to_execute: ['*'], tools_to_auto_execute: ['echo'], allow_without_virtual_key: true },
          ],
        },
      }),
      path: '#/logs',
    });
    await eventually(async () => assert.deepEqual((await apiClient(d.gw)<{ state: string }[]>('GET', '/api/mcp/clients')).body.map((c) => c.state), ['connected']), 30_000);
  });
  after(() => d?.close());

  test('the detail of an agent request lists its turns; a turn names its parent', T, async () => {
    const res = await fetch(`${d.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'turns in the dashboard' }], tool_choice: { type: 'function', function: { name: 'local-echo' } } }),
    });
    assert.equal(res.status, 200, await res.text());
    let parent = '';
    await eventually(async () => {
      const logs = (await apiClient(d.gw)<{ logs: { id: string }[] }>('GET', '/api/logs')).body.logs;
      assert.equal(logs.length, 1);
      parent = logs[0]!.id;
      assert.equal((await apiClient(d.gw)<{ logs: unknown[] }>('GET', `/api/logs?parent_request_id=${parent}`)).body.logs.length, 2);
    }, 15_000);

    const { page } = d;
    await page.goto(`${d.gw.url}/#/logs/${parent}`);
    await page.getByRole('heading', { level: 1, name: 'Request detail' }).waitFor();
    const turns = page.getByRole('region', { name: 'Agent turns (2)' });
    await turns.waitFor();
    const table = turns.getByRole('table', { name: 'Agent turns, oldest first' });
    assert.equal(await table.getByRole('row').count(), 3, 'a header row and two turns');
    assert.match(await table.innerText(), /openai\/gpt-4o/);

    await table.getByRole('link', { name: '1', exact: true }).click();
    await page.waitForURL(/#\/logs\/[^?]+$/);
    assert.notEqual(page.url().split('#/logs/')[1], parent);
    await page.getByRole('region', { name: 'Summary' }).getByRole('link', { name: parent }).waitFor();
    assert.match(await page.getByRole('region', { name: 'Summary' }).innerText(), /Counted\s+no: a turn of its parent request/);
    assert.equal(await page.getByRole('region', { name: /Agent turns/ }).count(), 0, 'a turn has no turns of its own');
  });
});
