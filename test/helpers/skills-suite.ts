// The skills repository suite, run on each store (skills.test.ts: embedded SQLite;
// skills-postgres.test.ts: a real PostgreSQL): /api/skills management behind the management
// credentials, validation that refuses bad uploads without touching what is stored, immutable SemVer
// versions, the public /skills routes read by real tools (git clone, Python's zipfile), serving
// restricted to virtual keys, the guess throttle, and the official openai SDK's client.skills
// against /v1/skills. Each gateway starts from an empty store.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startGateway, type InProcessGateway } from './in-process-gateway.ts';
import { apiClient, basic, type Api, type ApiError } from './api.ts';
import { eventually } from './patience.ts';
import { gitClone, skillJson, skillMd, treeOf, unzip, zipWithPython } from './skills.ts';
import type { SkillDetail, SkillList, SkillVersionDetail, SkillVersionView } from '../../proxy/src/api/answers.ts';


/**
 * Registers the suite. `store` gives the config's store section (empty: SQLite in the app dir),
 * awaited once before the first gateway starts; `stop()` stops the suite's gateway (a file that
 * stops the store's server calls it first).
 */
export function skillsSuite(store: () => Promise<Record<string, unknown>> | Record<string, unknown>): { stop(): Promise<void> } {
  let storeSection: Record<string, unknown> = {};
  const ADMIN = basic('admin', 'skills-admin-password');
  const MGMT_KEY = 'skills-management-key-0123456789';
  const VK = 'sk-bf-skills-reader-0123456789';
  const config = (serving?: 'public' | 'virtual_key') => ({
    client: { enable_logging: true },
    ...storeSection,
    governance: {
      auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'skills-admin-password', api_keys: [MGMT_KEY] },
      virtual_keys: [{ id: 'vk-reader', name: 'reader', value: VK, provider_configs: [] }],
    },
    skills: { max_files: 8, max_file_size_kb: 16, max_total_size_kb: 40, ...(serving && { serving }) },
  });

  let g: InProcessGateway;
  let api: Api;
  let anon: Api;

  before(async () => {
    storeSection = await store();
    g = await startGateway(config());
    api = apiClient(g, ADMIN);
    anon = apiClient(g);
  });

  after(async () => {
    await g?.stop();
  });

  const err = (a: { body: unknown }) => (a.body as ApiError).error;

  describe('management', () => {
    test('/api/skills answers only the management credentials', async () => {
      const none = await anon('GET', '/api/skills');
      assert.equal(none.status, 401);
      const vk = await anon('GET', '/api/skills', undefined, { authorization: `Bearer ${VK}` });
      assert.equal(vk.status, 401);
      const create = await anon('POST', '/api/skills', { files: skillJson('sneaky') });
      assert.equal(create.status, 401);
      assert.equal((await api<SkillList>('GET', '/api/skills')).status, 200);
      assert.equal((await apiClient(g, { authorization: `Bearer ${MGMT_KEY}` })('GET', '/api/skills')).status, 200);
      assert.equal((await api('GET', '/api/skills/sneaky')).status, 404);
    });

    test('a skill is created from JSON files: paths normalised, text and binary kept byte for byte', async () => {
      const files = skillJson('pdf-tools').map((f) => (f.path === 'scripts/run.sh' ? { ...f, path: './scripts//run.sh' } : f));
      const created = await api<SkillDetail>('POST', '/api/skills', { files });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.name, 'pdf-tools');
      assert.equal(created.body.description, 'Does pdf-tools things. Use it when pdf-tools is asked for.');
      assert.equal(created.body.current_version, null);
      assert.deepEqual(created.body.draft.map((f) => f.path), ['SKILL.md', 'assets/logo.bin', 'scripts/run.sh']);
      const logo = created.body.draft.find((f) => f.path === 'assets/logo.bin')!;
      assert.equal(logo.encoding, 'base64');
      assert.deepEqual(Buffer.from(logo.content, 'base64'), Buffer.from([0, 1, 2, 255, 254]));
      assert.equal(created.body.draft[0].content, skillMd('pdf-tools'));
      const again = await api('POST', '/api/skills', { files });
      assert.equal(again.status, 409);
      assert.equal(err(again).code, 'skill_exists');
    });

    test('a ZIP archive made by another tool is a skill too (its top directory dropped)', async () => {
      const zip = await zipWithPython({ 'zipped/SKILL.md': skillMd('zipped'), 'zipped/references/REF.md': '# ref\n' });
      const created = await api<SkillDetail>('POST', '/api/skills', { archive: zip.toString('base64') });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.draft.map((f) => f.path), ['SKILL.md', 'references/REF.md']);
      const broken = await api('POST', '/api/skills', { archive: Buffer.from('not a zip at all').toString('base64') });
      assert.equal(broken.status, 400);
      assert.equal(err(broken).param, 'archive');
      const escaping = await api('POST', '/api/skills', { archive: (await zipWithPython({ 'SKILL.md': skillMd('evil-zip'), '../outside.txt': 'x' })).toString('base64') });
      assert.equal(escaping.status, 400);
      assert.match(err(escaping).message, /cannot leave the skill's directory/);
      assert.equal((await api('GET', '/api/skills/evil-zip')).status, 404);
    });

    test('bad input is a 400 naming the field, and nothing stored changes', async () => {
      const before = await api<SkillDetail>('GET', '/api/skills/pdf-tools');
      const cases: [unknown, string, RegExp][] = [
        [{ files: [{ path: 'README.md', content: 'no skill here' }] }, 'files', /no SKILL\.md/],
        [{ files: [{ path: 'SKILL.md', content: '# no front matter\n' }] }, 'files[0].content', /front matter/],
        [{ files: [{ path: 'SKILL.md', content: '---\nname: PDF_Tools\ndescription: x\n---\n' }] }, 'files[0].content.name', /lowercase/],
        [{ files: [{ path: 'SKILL.md', content: '---\nname: -pdf\ndescription: x\n---\n' }] }, 'files[0].content.name', /hyphen/],
        [{ files: [{ path: 'SKILL.md', content: `---\nname: ${'a'.repeat(65)}\ndescription: x\n---\n` }] }, 'files[0].content.name', /more than 64/],
        [{ files: [{ path: 'SKILL.md', content: '---\nname: pdf-tools\n---\n' }] }, 'files[0].content.description', /description/],
        [{ files: [{ path: 'SKILL.md', content: '---\nname: [unclosed\n---\n' }] }, 'files[0].content', /not valid YAML/],
        [{ files: [...skillJson('pdf-tools'), { path: '../../etc/passwd', content: 'x' }] }, 'files[3].path', /cannot leave/],
        [{ files: [...skillJson('pdf-tools'), { path: '/etc/passwd', content: 'x' }] }, 'files[3].path', /absolute/],
        [{ files: [...skillJson('pdf-tools'), { path: 'C:/windows/x', content: 'x' }] }, 'files[3].path', /absolute/],
        [{ files: [...skillJson('pdf-tools'), { path: 'scripts\\..\\..\\x', content: 'x' }] }, 'files[3].path', /backslash/],
        [{ files: [...skillJson('pdf-tools'), { path: 'a\u0000b', content: 'x' }] }, 'files[3].path', /control character/],
        [{ files: [...skillJson('pdf-tools'), { path: 'scripts/./run.sh', content: 'x' }] }, 'files[3].path', /same file/],
        [{ files: [...skillJson('pdf-tools'), { path: 'x.bin', content: '@@@', encoding: 'base64' }] }, 'files[3].content', /base64/],
        [{ files: 'SKILL.md' }, 'files', /array/],
      ];
      for (const [body, param, message] of cases) {
        const a = await api('PUT', '/api/skills/pdf-tools/draft', body);
        assert.equal(a.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${a.text}`);
        assert.equal(err(a).param, param, a.text);
        assert.match(err(a).message, message);
      }
      const renamed = await api('PUT', '/api/skills/pdf-tools/draft', { files: skillJson('other-name') });
      assert.equal(renamed.status, 400);
      assert.match(err(renamed).message, /cannot change/);
      assert.deepEqual((await api<SkillDetail>('GET', '/api/skills/pdf-tools')).body, before.body);
    });

    test('limits on file count, file size and total size are 413s naming the field', async () => {
      const many = Array.from({ length: 9 }, (_, i) => ({ path: `f${i}.txt`, content: 'x' }));
      const tooMany = await api('POST', '/api/skills', { files: [{ path: 'SKILL.md', content: skillMd('big') }, ...many] });
      assert.equal(tooMany.status, 413);
      assert.equal(err(tooMany).param, 'files');
      assert.match(err(tooMany).message, /more than the 8/);
      const bigFile = await api('POST', '/api/skills', { files: [{ path: 'SKILL.md', content: skillMd('big') }, { path: 'big.txt', content: 'x'.repeat(16 * 1024 + 1) }] });
      assert.equal(bigFile.status, 413);
      assert.equal(err(bigFile).param, 'files[1].content');
      const total = await api('POST', '/api/skills', { files: [{ path: 'SKILL.md', content: skillMd('big') }, ...[1, 2, 3].map((i) => ({ path: `p${i}.txt`, content: 'x'.repeat(15 * 1024) }))] });
      assert.equal(total.status, 413);
      assert.equal(err(total).param, 'files');
      assert.match(err(total).message, /total/);
      const zipBomb = await api('POST', '/api/skills', { archive: (await zipWithPython({ 'SKILL.md': skillMd('bomb'), 'zeros.bin': Buffer.alloc(1024 * 1024) })).toString('base64') });
      assert.equal(zipBomb.status, 413);
      assert.equal(err(zipBomb).param, 'archive');
      assert.equal((await api('GET', '/api/skills/big')).status, 404);
      assert.equal((await api('GET', '/api/skills/bomb')).status, 404);
    });

    test('versions are SemVer, only move forward, and are immutable', async () => {
      const v1 = await api<SkillVersionView>('POST', '/api/skills/pdf-tools/versions', { version: '1.0.0' });
      assert.equal(v1.status, 201, v1.text);
      for (const [version, status, code] of [['1.0.0', 409, 'version_exists'], ['0.9.0', 409, 'version_not_greater'], ['1.0.0-rc.1', 409, 'version_not_greater'], ['v1', 400, 'invalid_field'], ['1.0', 400, 'invalid_field']] as const) {
        const a = await api('POST', '/api/skills/pdf-tools/versions', { version });
        assert.equal(a.status, status, `${version}: ${a.text}`);
        assert.equal(err(a).code, code);
      }
      // Editing the draft leaves 1.0.0 as it was published.
      const edited = skillJson('pdf-tools', [{ path: 'NEW.md', content: 'new\n' }]);
      assert.equal((await api('PUT', '/api/skills/pdf-tools/draft', { files: edited })).status, 200);
      const published = await api<SkillVersionDetail>('GET', '/api/skills/pdf-tools/versions/1.0.0');
      assert.deepEqual(published.body.files.map((f) => f.path), ['SKILL.md', 'assets/logo.bin', 'scripts/run.sh']);
      assert.equal(published.body.digest, v1.body.digest);
      assert.equal((await api('POST', '/api/skills/pdf-tools/versions', { version: '1.1.0' })).status, 201);
      const listed = await api<SkillList>('GET', '/api/skills');
      const s = listed.body.skills.find((x) => x.name === 'pdf-tools')!;
      assert.deepEqual(s.versions.map((v) => v.version), ['1.0.0', '1.1.0']);
      assert.equal(s.latest_version, '1.1.0');
      assert.equal(s.current_version, '1.1.0');
      // Deleting 1.1.0 serves 1.0.0 again, and 1.1.0 can never come back with other content.
      assert.equal((await api('DELETE', '/api/skills/pdf-tools/versions/1.1.0')).status, 200);
      assert.equal((await api('GET', '/api/skills/pdf-tools/versions/1.1.0')).status, 404);
      assert.equal((await api<SkillDetail>('GET', '/api/skills/pdf-tools')).body.current_version, '1.0.0');
      const reuse = await api('POST', '/api/skills/pdf-tools/versions', { version: '1.1.0' });
      assert.equal(reuse.status, 409);
      assert.match(err(reuse).message, /deleted/);
      assert.equal((await api('POST', '/api/skills/pdf-tools/versions', { version: '1.2.0' })).status, 201);
      // A default pins what clients get.
      assert.equal((await api('PATCH', '/api/skills/pdf-tools', { default_version: '1.0.0' })).status, 200);
      assert.equal((await api<SkillDetail>('GET', '/api/skills/pdf-tools')).body.current_version, '1.0.0');
      assert.equal((await api('PATCH', '/api/skills/pdf-tools', { default_version: '9.9.9' })).status, 404);
      assert.equal((await api('PATCH', '/api/skills/pdf-tools', { default_version: null })).status, 200);
      assert.equal((await api<SkillDetail>('GET', '/api/skills/pdf-tools')).body.current_version, '1.2.0');
    });
  });

  describe('public serving', () => {
    test('the index, the manifests and a version archive read by Python zipfile', async () => {
      const index = await anon<{ skills: { name: string; version: string }[]; git_url: string }>('GET', '/skills');
      assert.equal(index.status, 200);
      assert.deepEqual(index.body.skills.find((s) => s.name === 'pdf-tools')?.version, '1.2.0');
      // zipped has no published version: it is listed, with no version to install.
      assert.equal(index.body.skills.find((s) => s.name === 'zipped')?.version, null);
      const claude = await anon<{ name: string; owner: { name: string }; plugins: { name: string; source: string; version: string }[] }>('GET', '/skills/.claude-plugin/marketplace.json');
      assert.equal(claude.body.name, 'skybridge-skills');
      assert.deepEqual(claude.body.plugins, [{ name: 'pdf-tools', source: './plugins/pdf-tools', description: 'Does pdf-tools things. Use it when pdf-tools is asked for.', version: '1.2.0' }]);
      const codex = await anon<{ plugins: { name: string; source: { source: string; path: string } }[] }>('GET', '/skills/.agents/plugins/marketplace.json');
      assert.deepEqual(codex.body.plugins.map((p) => [p.name, p.source]), [['pdf-tools', { source: 'local', path: './plugins/pdf-tools' }]]);
      const res = await fetch(`${g.url}/skills/pdf-tools/1.0.0.zip`);
      assert.equal(res.headers.get('content-type'), 'application/zip');
      const entries = await unzip(Buffer.from(await res.arrayBuffer()));
      assert.deepEqual([...entries.keys()], ['pdf-tools/SKILL.md', 'pdf-tools/assets/logo.bin', 'pdf-tools/scripts/run.sh']);
      assert.deepEqual(entries.get('pdf-tools/assets/logo.bin'), Buffer.from([0, 1, 2, 255, 254]));
      const all = await unzip(Buffer.from(await (await fetch(`${g.url}/skills/all.zip`)).arrayBuffer()));
      assert.ok(all.has('pdf-tools/NEW.md'), 'all.zip holds the current version (1.2.0)');
      const raw = await fetch(`${g.url}/skills/pdf-tools/latest/SKILL.md`);
      assert.equal(raw.status, 200);
      assert.equal(raw.headers.get('x-content-type-options'), 'nosniff', 'an uploaded file is never rendered as a page of the gateway');
      assert.equal(await raw.text(), skillMd('pdf-tools'));
      const one = await anon<{ version: string; versions: { version: string; archive_url: string }[] }>('GET', '/skills/pdf-tools');
      assert.equal(one.body.version, '1.2.0');
      assert.deepEqual(one.body.versions.map((v) => v.version), ['1.0.0', '1.2.0']);
      assert.equal((await fetch(one.body.versions[0].archive_url)).status, 200);
      assert.equal((await fetch(`${g.url}/skills/pdf-tools/7.0.0.zip`)).status, 404);
      assert.equal((await fetch(`${g.url}/skills/zipped/latest.zip`)).status, 404);
    });

    test('git clones the marketplace: both manifests and the skill, as Claude Code and Codex install it', async () => {
      const dir = await gitClone(`${g.url}/skills/marketplace.git`);
      const tree = treeOf(dir);
      assert.deepEqual([...tree.keys()].sort(), [
        '.agents/plugins/marketplace.json',
        '.claude-plugin/marketplace.json',
        'plugins/pdf-tools/.claude-plugin/plugin.json',
        'plugins/pdf-tools/.codex-plugin/plugin.json',
        'plugins/pdf-tools/skills/pdf-tools/NEW.md',
        'plugins/pdf-tools/skills/pdf-tools/SKILL.md',
        'plugins/pdf-tools/skills/pdf-tools/assets/logo.bin',
        'plugins/pdf-tools/skills/pdf-tools/scripts/run.sh',
      ]);
      assert.equal(tree.get('plugins/pdf-tools/skills/pdf-tools/SKILL.md')!.toString(), skillMd('pdf-tools'));
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'plugins/pdf-tools/.claude-plugin/plugin.json'), 'utf8')), { name: 'pdf-tools', version: '1.2.0', description: 'Does pdf-tools things. Use it when pdf-tools is asked for.' });
      // Every relative source of both manifests names a directory of the clone.
      const claude = JSON.parse(tree.get('.claude-plugin/marketplace.json')!.toString()) as { plugins: { source: string }[] };
      for (const p of claude.plugins) assert.ok([...tree.keys()].some((k) => k.startsWith(`${p.source.slice(2)}/`)));
    });

    test('skills.serving: virtual_key admits virtual keys (git as the Basic password) and refuses the rest', async () => {
      g.writeConfig(config('virtual_key'));
      await eventually(async () => assert.equal((await fetch(`${g.url}/skills`)).status, 401), 10_000);
      const refused = await fetch(`${g.url}/skills/pdf-tools/1.0.0.zip`);
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('www-authenticate') ?? '', /^Basic/);
      assert.equal((await fetch(`${g.url}/skills`, { headers: { 'x-bf-vk': 'sk-bf-not-a-key-000000' } })).status, 401);
      assert.equal((await fetch(`${g.url}/skills`, { headers: { 'x-bf-vk': VK } })).status, 200);
      assert.equal((await fetch(`${g.url}/skills/.claude-plugin/marketplace.json`, { headers: { authorization: `Bearer ${VK}` } })).status, 200);
      await assert.rejects(gitClone(`${g.url}/skills/marketplace.git`));
      const dir = await gitClone(`${g.url.replace('http://', `http://x:${VK}@`)}/skills/marketplace.git`);
      assert.ok(treeOf(dir).has('plugins/pdf-tools/skills/pdf-tools/SKILL.md'));
      g.writeConfig(config());
      await eventually(async () => assert.equal((await fetch(`${g.url}/skills`)).status, 200), 10_000);
    });
  });

  describe('the openai SDK (client.skills) against /v1/skills', () => {
    const client = () => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: MGMT_KEY, maxRetries: 0 });

    test('create, version, list, retrieve, download and delete', async () => {
      const openai = client();
      const skill = await openai.skills.create({
        files: [await toFile(Buffer.from(skillMd('sdk-skill')), 'sdk-skill/SKILL.md'), await toFile(Buffer.from('print(1)\n'), 'sdk-skill/scripts/main.py')],
      });
      assert.equal(skill.id, 'sdk-skill');
      assert.equal(skill.object, 'skill');
      assert.equal(skill.default_version, '1.0.0');
      const v2 = await openai.skills.versions.create('sdk-skill', { files: [await toFile(Buffer.from(skillMd('sdk-skill', 'Second take.')), 'sdk-skill/SKILL.md')] });
      assert.equal(v2.version, '1.1.0');
      assert.equal(v2.description, 'Second take.');
      const versions = [];
      for await (const v of openai.skills.versions.list('sdk-skill', { order: 'asc', limit: 1 })) versions.push(v.version);
      assert.deepEqual(versions, ['1.0.0', '1.1.0']);
      const names = [];
      for await (const s of openai.skills.list({ order: 'asc' })) names.push(s.name);
      assert.ok(names.includes('sdk-skill') && names.includes('pdf-tools'), names.join());
      assert.equal((await openai.skills.retrieve('sdk-skill')).latest_version, '1.1.0');
      // The OpenAI prefix serves the same routes.
      const viaPrefix = new OpenAI({ baseURL: `${g.url}/openai/v1`, apiKey: MGMT_KEY, maxRetries: 0 });
      assert.equal((await viaPrefix.skills.versions.retrieve('1.0.0', { skill_id: 'sdk-skill' })).id, 'sdk-skill@1.0.0');
      assert.equal((await openai.skills.update('sdk-skill', { default_version: '1.0.0' })).default_version, '1.0.0');
      const content = await unzip(Buffer.from(await (await openai.skills.content.retrieve('sdk-skill')).arrayBuffer()));
      assert.deepEqual([...content.keys()], ['sdk-skill/SKILL.md', 'sdk-skill/scripts/main.py']);
      const v2zip = await unzip(Buffer.from(await (await openai.skills.versions.content.retrieve('1.1.0', { skill_id: 'sdk-skill' })).arrayBuffer()));
      assert.deepEqual([...v2zip.keys()], ['sdk-skill/SKILL.md']);
      assert.equal((await openai.skills.versions.retrieve('1.1.0', { skill_id: 'sdk-skill' })).skill_id, 'sdk-skill');
      const deletedVersion = await openai.skills.versions.delete('1.1.0', { skill_id: 'sdk-skill' });
      assert.deepEqual([deletedVersion.object, deletedVersion.deleted, deletedVersion.version], ['skill.version.deleted', true, '1.1.0']);
      const deleted = await openai.skills.delete('sdk-skill');
      assert.deepEqual([deleted.object, deleted.deleted], ['skill.deleted', true]);
      await assert.rejects(openai.skills.retrieve('sdk-skill'), (e: unknown) => e instanceof OpenAI.NotFoundError);
    });

    test('writes need the management credentials; a bad upload is a 400 naming the field', async () => {
      const reader = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: VK, maxRetries: 0 });
      await assert.rejects(reader.skills.create({ files: [await toFile(Buffer.from(skillMd('nope')), 'SKILL.md')] }), (e: unknown) => e instanceof OpenAI.AuthenticationError);
      assert.ok((await reader.skills.retrieve('pdf-tools')).id === 'pdf-tools', 'reads are public by default');
      await assert.rejects(client().skills.create({ files: [await toFile(Buffer.from('no front matter'), 'x/SKILL.md')] }), (e: unknown) => e instanceof OpenAI.BadRequestError && /front matter/.test(e.message));
      // The SDK refuses a `..` filename itself; a hand-made form reaches the gateway, which refuses it too.
      const form = new FormData();
      form.append('files[]', new Blob([skillMd('esc')]), 'esc/SKILL.md');
      form.append('files[]', new Blob(['x']), 'esc/../../escape.txt');
      const escaped = await fetch(`${g.url}/v1/skills`, { method: 'POST', headers: { authorization: `Bearer ${MGMT_KEY}` }, body: form });
      assert.equal(escaped.status, 400);
      const body = (await escaped.json()) as ApiError;
      assert.equal(body.error.param, 'files[1].filename');
      assert.match(body.error.message, /cannot leave/);
      assert.equal((await api('GET', '/api/skills/esc')).status, 404);
    });
  });

  test('deleting a skill removes it everywhere', async () => {
    assert.equal((await api('DELETE', '/api/skills/pdf-tools')).status, 200);
    assert.equal((await api('GET', '/api/skills/pdf-tools')).status, 404);
    assert.equal((await fetch(`${g.url}/skills/pdf-tools/1.0.0.zip`)).status, 404);
    const claude = (await (await fetch(`${g.url}/skills/.claude-plugin/marketplace.json`)).json()) as { plugins: unknown[] };
    assert.deepEqual(claude.plugins, []);
    assert.equal((await api('DELETE', '/api/skills/pdf-tools')).status, 404);
  });

  test('wrong keys at /skills count as guesses: an address that keeps guessing is locked out, the right key included', async () => {
    // A gateway of its own: its guess throttle starts empty and the lock-out does not reach the tests above.
    const g2 = await startGateway(config('virtual_key'));
    try {
      for (let i = 0; i < 5; i++) assert.equal((await fetch(`${g2.url}/skills`, { headers: { authorization: `Basic ${Buffer.from(`x:sk-bf-guess-${i}-000000000`).toString('base64')}` } })).status, 401);
      const locked = await fetch(`${g2.url}/skills`, { headers: { 'x-bf-vk': VK } });
      assert.equal(locked.status, 429);
      assert.ok(Number(locked.headers.get('retry-after')) > 0);
      // Without a credential there is nothing to guess: the plain 401 and its challenge.
      assert.equal((await fetch(`${g2.url}/skills`)).status, 401);
    } finally {
      await g2.stop();
    }
  });

  return { stop: async () => g?.stop() };
}
