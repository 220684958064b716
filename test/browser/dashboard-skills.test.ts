// The Skills page in a real Chromium against a running gateway: a skill created in the browser (the
// gateway's refusal of a bad SKILL.md shown naming the field), its files viewed, its draft edited,
// published as versions (a version that is not greater refused), a version downloaded and deleted,
// and the skill deleted; what the page did is checked on the public /skills routes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDashboard, type OpenDashboard } from '../helpers/browser.ts';
import { skillMd, unzip, zipWithPython } from '../helpers/skills.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
const open: OpenDashboard[] = [];
after(async () => {
  await Promise.all(open.map((d) => d.close()));
});

test('skills: create, view files, edit the draft, publish, download, delete', async () => {
  const d = await openDashboard({
    config: { client: { enable_logging: true }, governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } } },
    login: { username: ADMIN, password: PASSWORD },
    path: '#/skills',
  });
  open.push(d);
  const { page, gw } = d;
  await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
  await page.getByText('No skill yet.').waitFor();
  assert.match((await page.getByTestId('install-commands').textContent()) ?? '', /claude plugin marketplace add http:\/\/127\.0\.0\.1:\d+\/skills\/marketplace\.git/);

  // Create: the template's name is kept uppercase on purpose first, and the gateway says why not.
  await page.getByRole('button', { name: 'New skill', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'New skill' });
  const skillMdBox = dialog.getByLabel('Content of SKILL.md');
  await skillMdBox.fill('---\nname: Release_Notes\ndescription: Writes release notes from merged changes.\n---\n# Release notes\n');
  await dialog.getByRole('button', { name: 'Create skill' }).click();
  await dialog.getByText('(field: files[0].content.name)').waitFor();
  await skillMdBox.fill('---\nname: release-notes\ndescription: Writes release notes from merged changes.\n---\n# Release notes\n');
  await dialog.getByRole('button', { name: 'Add file' }).click();
  await dialog.getByLabel('Path of file 2').fill('templates/notes.md');
  await dialog.getByLabel('Content of templates/notes.md').fill('## Changes\n');
  await dialog.getByRole('button', { name: 'Create skill' }).click();

  await page.getByRole('heading', { name: 'Skill release-notes' }).waitFor();
  assert.equal(await page.getByTestId('served-version').textContent(), 'none');
  await page.getByRole('button', { name: 'templates/notes.md' }).click();
  assert.equal(await page.getByLabel('Content of templates/notes.md').textContent(), '## Changes\n');

  // Publish 1.0.0, then a version that is not greater is refused with the gateway's reason.
  const versionInput = page.getByLabel('New version');
  await versionInput.fill('1.0.0');
  await page.getByRole('button', { name: 'Publish draft' }).click();
  await page.getByRole('table', { name: 'Published versions' }).getByRole('cell', { name: '1.0.0', exact: true }).waitFor();
  assert.equal(await page.getByTestId('served-version').textContent(), '1.0.0');
  await versionInput.fill('0.5.0');
  await page.getByRole('button', { name: 'Publish draft' }).click();
  await page.getByText(/0\.5\.0 is not greater than 1\.0\.0/).waitFor();

  // Edit the draft: a path that escapes the skill is refused, then a good edit is saved.
  await page.getByRole('button', { name: 'Edit draft' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit draft of release-notes' });
  await edit.getByLabel('Path of file 2').fill('../notes.md');
  await edit.getByRole('button', { name: 'Save draft' }).click();
  await edit.getByText('(field: files[1].path)').waitFor();
  await edit.getByLabel('Path of file 2').fill('templates/notes.md');
  await edit.getByLabel('Content of templates/notes.md').fill('## Changes\n\n## Fixes\n');
  await edit.getByRole('button', { name: 'Save draft' }).click();
  await edit.waitFor({ state: 'detached' });
  await versionInput.fill('1.1.0');
  await page.getByRole('button', { name: 'Publish draft' }).click();
  await page.getByRole('table', { name: 'Published versions' }).getByRole('cell', { name: '1.1.0', exact: true }).waitFor();

  // The published versions are what agents get: 1.0.0 unchanged by the edit, 1.1.0 with it.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download 1.0.0' }).click()]);
  const path = await download.path();
  const { readFileSync } = await import('node:fs');
  const v1 = await unzip(readFileSync(path));
  assert.equal(v1.get('release-notes/templates/notes.md')?.toString(), '## Changes\n');
  const v11 = await unzip(Buffer.from(await (await fetch(`${gw.url}/skills/release-notes/1.1.0.zip`)).arrayBuffer()));
  assert.equal(v11.get('release-notes/templates/notes.md')?.toString(), '## Changes\n\n## Fixes\n');

  // Delete 1.1.0: 1.0.0 is served again.
  await page.getByRole('button', { name: 'Delete version 1.1.0' }).click();
  await page.getByRole('dialog', { name: 'Delete version 1.1.0?' }).getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('table', { name: 'Published versions' }).getByRole('cell', { name: '1.1.0', exact: true }).waitFor({ state: 'detached' });
  assert.equal(await page.getByTestId('served-version').textContent(), '1.0.0');
  assert.equal((await fetch(`${gw.url}/skills/release-notes/1.1.0.zip`)).status, 404);

  // The list shows it; deleting the skill empties it and the marketplace.
  await page.getByRole('link', { name: 'All skills' }).click();
  await page.getByRole('table', { name: 'Skills' }).getByRole('link', { name: 'release-notes' }).click();
  await page.getByRole('button', { name: 'Delete skill' }).click();
  await page.getByRole('dialog', { name: 'Delete skill release-notes?' }).getByRole('button', { name: 'Delete' }).click();
  await page.getByText('No skill yet.').waitFor();
  const claude = (await (await fetch(`${gw.url}/skills/.claude-plugin/marketplace.json`)).json()) as { plugins: unknown[] };
  assert.deepEqual(claude.plugins, []);

  // A ZIP archive made by another tool: a broken one is refused naming the field, a good one is a skill.
  const upload = page.getByLabel('New skill from a ZIP archive');
  await upload.setInputFiles({ name: 'broken.zip', mimeType: 'application/zip', buffer: Buffer.from('not a zip') });
  await page.getByText('(field: archive)').waitFor();
  const zip = await zipWithPython({ 'from-zip/SKILL.md': skillMd('from-zip'), 'from-zip/scripts/go.sh': 'echo go\n' });
  await upload.setInputFiles({ name: 'from-zip.zip', mimeType: 'application/zip', buffer: zip });
  await page.getByRole('heading', { name: 'Skill from-zip' }).waitFor();
  await page.getByRole('button', { name: 'scripts/go.sh' }).click();
  assert.equal(await page.getByLabel('Content of scripts/go.sh').textContent(), 'echo go\n');
});
