// The skills repository on a shared PostgreSQL store (a throw-away server): the whole skills suite
// (test/helpers/skills-suite.ts) on a database of its own, then two gateways on one database: a skill
// created, refused and published through one is served by the other (index, archive, git clone of
// the same commit), and a version published on one is a 409 on the other.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { apiClient, basic, type ApiError } from '../helpers/api.ts';
import { gitClone, skillJson, skillMd, treeOf, unzip } from '../helpers/skills.ts';
import { skillsSuite } from '../helpers/skills-suite.ts';
import type { SkillDetail, SkillList } from '../../proxy/src/api/answers.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const ADMIN = basic('admin', 'skills-pg-admin-password');
let pgServer: RunningPostgres;
let a: InProcessGateway;
let b: InProcessGateway;
let suiteDb: string;

const pgStore = (db: string) => ({ logs_store: { enabled: true, type: 'postgres', config: { host: pgServer.host, port: String(pgServer.port), user: pgServer.user, password: '', db_name: db, ssl_mode: 'disable' } } });

// Started once, awaited by this file's gateways and by the suite's (hooks may not wait for each other).
const ready = (async () => {
  pgServer = await startPostgres();
  suiteDb = await pgServer.createDatabase('skills_suite');
})();
// A failed start is reported by the hooks that await it, not as an unhandled rejection first.
ready.catch(() => undefined);

before(async () => {
  await ready;
  const config = {
    ...pgStore(pgServer.database),
    governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'skills-pg-admin-password' } },
  };
  a = await startGateway(config);
  b = await startGateway(config);
});

const suite = skillsSuite(async () => {
  await ready;
  return pgStore(suiteDb);
});

after(async () => {
  await suite.stop();
  await a?.stop();
  await b?.stop();
  await pgServer?.stop();
});

test('a skill published through one gateway is served by the other', async () => {
  const apiA = apiClient(a, ADMIN);
  const apiB = apiClient(b, ADMIN);
  assert.equal((await apiA('POST', '/api/skills', { files: skillJson('shared-skill') })).status, 201);
  // A refused draft on B loses nothing A stored.
  const refused = await apiB<ApiError>('PUT', '/api/skills/shared-skill/draft', { files: [{ path: 'SKILL.md', content: skillMd('shared-skill') }, { path: '../x', content: 'x' }] });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.param, 'files[1].path');
  assert.deepEqual((await apiB<SkillDetail>('GET', '/api/skills/shared-skill')).body.draft.map((f) => f.path), ['SKILL.md', 'assets/logo.bin', 'scripts/run.sh']);
  assert.equal((await apiA('POST', '/api/skills/shared-skill/versions', { version: '2.0.0' })).status, 201);
  const dup = await apiB<ApiError>('POST', '/api/skills/shared-skill/versions', { version: '2.0.0' });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.error.code, 'version_exists');
  assert.equal((await apiB('POST', '/api/skills', { files: skillJson('shared-skill') })).status, 409);
  assert.deepEqual((await apiB<SkillList>('GET', '/api/skills')).body.skills.map((s) => [s.name, s.current_version]), [['shared-skill', '2.0.0']]);

  const index = (await (await fetch(`${b.url}/skills`)).json()) as { skills: { name: string; version: string }[] };
  assert.deepEqual(index.skills.map((s) => [s.name, s.version]), [['shared-skill', '2.0.0']]);
  const zip = await unzip(Buffer.from(await (await fetch(`${b.url}/skills/shared-skill/2.0.0.zip`)).arrayBuffer()));
  assert.equal(zip.get('shared-skill/SKILL.md')?.toString(), skillMd('shared-skill'));
  const fromB = await gitClone(`${b.url}/skills/marketplace.git`);
  assert.equal(treeOf(fromB).get('plugins/shared-skill/skills/shared-skill/SKILL.md')?.toString(), skillMd('shared-skill'));
  // Both replicas serve the same commit: a client switching between them sees no change.
  const fromA = await gitClone(`${a.url}/skills/marketplace.git`);
  const head = async (dir: string) => (await promisify(execFile)('git', ['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
  assert.equal(await head(fromA), await head(fromB));

  assert.equal((await apiB('DELETE', '/api/skills/shared-skill/versions/2.0.0')).status, 200);
  assert.equal((await fetch(`${a.url}/skills/shared-skill/2.0.0.zip`)).status, 404);
  assert.equal((await apiA('DELETE', '/api/skills/shared-skill')).status, 200);
  assert.equal((await apiB('GET', '/api/skills/shared-skill')).status, 404);
});
