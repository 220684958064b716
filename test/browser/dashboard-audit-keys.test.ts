// The Audit log and Management keys pages in a real Chromium against a running gateway: a key issued
// in the browser (a missing scope refused naming the field, then its value shown once), used from a
// script within its scope and refused outside it, revoked in the browser and refused; the audit page
// lists the issuance, filters by action, opens a record and verifies the chain.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDashboard, type OpenDashboard } from '../helpers/browser.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
const open: OpenDashboard[] = [];
after(async () => {
  await Promise.all(open.map((d) => d.close()));
});

test('management keys and the audit log: issue, use, revoke, search, verify', async () => {
  const d = await openDashboard({
    config: { client: { enable_logging: true }, governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } } },
    login: { username: ADMIN, password: PASSWORD },
    path: '#/management-keys',
  });
  open.push(d);
  const { page, gw } = d;
  await page.getByRole('heading', { name: 'Management keys', level: 1 }).waitFor();
  await page.getByText('No key issued yet.').waitFor();

  await page.getByRole('button', { name: 'Issue key' }).click();
  const dialog = page.getByRole('dialog', { name: 'Issue a management key' });
  await dialog.getByLabel('Name').fill('deploy bot');
  await dialog.getByRole('button', { name: 'Issue', exact: true }).click();
  await dialog.getByText('(field: scopes)').waitFor();
  await dialog.getByLabel('governance:write').check();
  await dialog.getByRole('button', { name: 'Issue', exact: true }).click();
  const value = (await page.getByTestId('shown-once').textContent()) ?? '';
  assert.match(value, /^sbk_/);
  await page.getByRole('cell', { name: 'deploy bot' }).waitFor();

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${value}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  assert.equal((await call('POST', '/api/governance/teams', { name: 'from-the-bot' })).status, 201);
  assert.equal((await call('GET', '/api/providers')).status, 403);

  await page.getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('dialog', { name: 'Revoke key deploy bot?' }).getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('cell', { name: 'revoked', exact: true }).waitFor();
  assert.equal((await call('GET', '/api/governance/teams')).status, 401);

  await page.goto(`${gw.url}/#/audit`);
  await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
  const table = page.getByRole('table', { name: 'Audit records' });
  await table.getByRole('cell', { name: 'issue', exact: true }).waitFor();
  await table.getByRole('cell', { name: 'revoke', exact: true }).waitFor();
  await table.getByRole('cell', { name: 'deploy bot (management_key)' }).waitFor();
  await page.getByLabel('Action').fill('issue');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('1 records', { exact: true }).waitFor();
  await table.getByRole('cell', { name: 'issue', exact: true }).click();
  const record = (await page.getByTestId('audit-record').textContent()) ?? '';
  assert.match(record, /"name": "deploy bot"/);
  assert.ok(!record.includes(value), 'the key value is not in the record');
  await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
  await page.getByRole('button', { name: 'Verify chain' }).click();
  assert.match((await page.getByTestId('verify-result').textContent()) ?? '', /The chain is intact: \d+ records checked/);
});
