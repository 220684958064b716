// Management API keys and the audit log on the embedded SQLite store, through a running gateway:
// keys issued with scopes (the value once, stored hashed), refused with a 403 naming the missing
// scope, revoked; config.json keys still working; every change, login, failed login and logout
// recorded with who, from where and the masked change; search, export as JSON lines; the chain
// verified, then edited and shortened in the database file directly, and the break named. Retention
// on a real SQLite store: the oldest records go, the checkpoint keeps the chain verifiable.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { apiClient, basic, bearer, type Api, type ApiError } from '../helpers/api.ts';
import { eventually } from '../helpers/patience.ts';
import type { AuditLogList, AuditRecordView, AuditVerifyAnswer, IssuedManagementKey, ManagementKeyList } from '../../proxy/src/api/answers.ts';
import { openSqliteStore } from '../../proxy/src/logs/sqlite-store.ts';
import { AuditLog } from '../../proxy/src/audit/log.ts';

const PASSWORD = 'audit-admin-password';
const CONFIG_KEY = 'config-json-management-key-0123456789';
let g: InProcessGateway;
let admin: Api;

const config = {
  logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
  governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: PASSWORD, api_keys: [CONFIG_KEY] } },
};

before(async () => {
  g = await startGateway(config);
  admin = apiClient(g, { ...basic('admin', PASSWORD), 'user-agent': 'audit-test-admin' });
});

after(async () => {
  await g?.stop();
});

const issue = (body: unknown) => admin<IssuedManagementKey & ApiError>('POST', '/api/management-keys', body);

async function records(query = ''): Promise<AuditRecordView[]> {
  const r = await admin<AuditLogList>('GET', `/api/audit-logs${query}`);
  assert.equal(r.status, 200, r.text);
  return r.body.records;
}

test('a key is issued once, stored hashed, and works only within its scopes', async () => {
  const issued = await issue({ name: 'ci deployer', scopes: ['governance:write'], description: 'pipeline' });
  assert.equal(issued.status, 201, issued.text);
  assert.match(issued.body.value, /^sbk_[A-Za-z0-9_-]{43}$/);
  assert.equal(issued.body.status, 'active');
  assert.ok(issued.body.value.startsWith(issued.body.prefix));
  // Listed without the value; the database holds its digest only.
  const list = await admin<ManagementKeyList>('GET', '/api/management-keys');
  assert.ok(!list.text.includes(issued.body.value));
  assert.deepEqual(list.body.keys.map((k) => k.name), ['ci deployer']);
  const db = new DatabaseSync(join(g.appDir, 'logs.db'), { readOnly: true });
  try {
    const rows = db.prepare('SELECT * FROM management_keys').all();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(issued.body.value), 'the value is not stored');
  } finally {
    db.close();
  }

  const key = apiClient(g, bearer(issued.body.value));
  const team = await key<{ team: { id: string } }>('POST', '/api/governance/teams', { name: 'made-by-key' });
  assert.equal(team.status, 201, team.text);
  assert.equal((await key('GET', '/api/governance/teams')).status, 200);
  // Another area, and the keys themselves: 403 naming the scope that is missing.
  const providers = await key<ApiError>('GET', '/api/providers');
  assert.equal(providers.status, 403);
  assert.equal(providers.body.error.code, 'missing_scope');
  assert.equal(providers.body.error.param, 'providers:read');
  assert.match(providers.body.error.message, /providers:read/);
  const escalate = await key<ApiError>('POST', '/api/management-keys', { name: 'wider', scopes: ['admin'] });
  assert.equal(escalate.status, 403);
  assert.equal(escalate.body.error.param, 'admin');
  // x-api-key works as Bearer does; last use is listed.
  assert.equal((await apiClient(g, { 'x-api-key': issued.body.value })('GET', '/api/governance/customers')).status, 200);
  const used = (await admin<ManagementKeyList>('GET', '/api/management-keys')).body.keys[0];
  assert.ok(used.last_used_at !== null && Date.parse(used.last_used_at) > Date.now() - 60_000, JSON.stringify(used));

  // The team write is in the audit log under the key's id and name.
  const byKey = await records(`?actor=${issued.body.id}&outcome=success`);
  assert.equal(byKey.length, 1, JSON.stringify(byKey));
  assert.equal(byKey[0].actor.type, 'management_key');
  assert.equal(byKey[0].actor.name, 'ci deployer');
  assert.equal(byKey[0].action, 'create');
  assert.equal(byKey[0].resource, 'governance/teams');
  const details = byKey[0].details as { request: unknown; config_hash: { before: string; after: string } };
  assert.deepEqual(details.request, { name: 'made-by-key' });
  assert.notEqual(details.config_hash.before, details.config_hash.after);
  // A write refused for its scope is recorded as denied, with what was attempted (reads are not recorded).
  const refused = await key<ApiError>('POST', '/api/providers', { provider: 'anthropic', keys: [{ name: 'k', value: 'sk-ant-0123456789abcdefghij', weight: 1 }] });
  assert.equal(refused.status, 403);
  const [deniedRecord, escalation] = await records(`?actor=${issued.body.id}&outcome=denied`);
  assert.equal(deniedRecord.resource, 'providers');
  assert.equal(deniedRecord.status_code, 403);
  assert.ok(!JSON.stringify(deniedRecord).includes('sk-ant-0123456789abcdefghij'));
  assert.equal(escalation.resource, 'management-keys');
  assert.deepEqual((escalation.details as { request: unknown }).request, { name: 'wider', scopes: ['admin'] });
  assert.equal((await records(`?actor=${issued.body.id}`)).length, 3, 'the reads made with the key are not recorded');
});

test('read_only reads every area and writes none; revocation ends a key at once and is audited', async () => {
  const issued = await issue({ name: 'auditor', scopes: ['read_only'] });
  assert.equal(issued.status, 201);
  const key = apiClient(g, bearer(issued.body.value));
  for (const path of ['/api/providers', '/api/governance/virtual-keys', '/api/audit-logs', '/api/config', '/api/logs']) assert.equal((await key('GET', path)).status, 200, path);
  const write = await key<ApiError>('POST', '/api/governance/teams', { name: 'nope' });
  assert.equal(write.status, 403);
  assert.equal(write.body.error.param, 'governance:write');

  const revoked = await admin<{ status: string; revoked_by: string }>('DELETE', `/api/management-keys/${issued.body.id}`);
  assert.equal(revoked.status, 200);
  assert.equal(revoked.body.status, 'revoked');
  assert.equal(revoked.body.revoked_by, 'admin:admin');
  const afterRevoke = await key<ApiError>('GET', '/api/providers');
  assert.equal(afterRevoke.status, 401);
  const trail = await records(`?resource=management-keys`);
  const actions = trail.filter((r) => r.resource_id === issued.body.id).map((r) => r.action);
  assert.deepEqual(actions, ['revoke', 'issue']);
  const issuedRecord = trail.find((r) => r.action === 'issue' && r.resource_id === issued.body.id)!;
  assert.deepEqual(issuedRecord.details, { name: 'auditor', scopes: ['read_only'], expires_at: null });
  assert.equal(issuedRecord.actor.type, 'admin');
  assert.equal(issuedRecord.actor.user_agent, 'audit-test-admin');
  assert.ok(!JSON.stringify(trail).includes(issued.body.value), 'no key value in the audit log');
});

test('bad keys are refused naming the field; an expired key does not work; config.json keys keep every scope', async () => {
  const badScope = await issue({ name: 'x', scopes: ['governance:write', 'everything'] });
  assert.equal(badScope.status, 400);
  assert.equal(badScope.body.error.param, 'scopes[1]');
  const past = await issue({ name: 'x', scopes: ['read_only'], expires_at: '2001-01-01T00:00:00Z' });
  assert.equal(past.status, 400);
  assert.equal(past.body.error.param, 'expires_at');
  const garbled = await issue({ name: 'x', scopes: ['read_only'], expires_at: 'next tuesday' });
  assert.equal(garbled.status, 400);
  assert.equal(garbled.body.error.param, 'expires_at');
  assert.equal((await issue({ scopes: ['read_only'] })).body.error.param, 'name');

  const expiresAt = Date.now() + 1000;
  const soon = await issue({ name: 'short-lived', scopes: ['read_only'], expires_at: new Date(expiresAt).toISOString() });
  assert.equal(soon.status, 201);
  const key = apiClient(g, bearer(soon.body.value));
  assert.equal((await key('GET', '/api/providers')).status, 200);
  // Expiry is wall-clock time: once it has passed, one request (failures count towards the guess throttle).
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
  assert.equal((await key('GET', '/api/providers')).status, 401);
  const listed = (await admin<ManagementKeyList>('GET', '/api/management-keys')).body.keys.find((k) => k.id === soon.body.id);
  assert.equal(listed?.status, 'expired');

  const configKey = apiClient(g, bearer(CONFIG_KEY));
  assert.equal((await configKey('GET', '/api/management-keys')).status, 200);
  const team = await configKey('POST', '/api/governance/teams', { name: 'by-config-key' });
  assert.equal(team.status, 201);
  const [rec] = await records('?action=create&resource=governance/teams&limit=1');
  assert.equal(rec.actor.type, 'api_key');
  assert.match(rec.actor.id ?? '', /^config-key-[0-9a-f]{12}$/);
  assert.ok(!JSON.stringify(rec).includes(CONFIG_KEY));
});

test('logins, failed logins and logouts are recorded with who and from where; secrets are masked', async () => {
  const anon = apiClient(g, { 'user-agent': 'audit-test-browser' });
  assert.equal((await anon('POST', '/api/session/login', { username: 'admin', password: 'wrong' })).status, 401);
  const login = await anon<{ token: string }>('POST', '/api/session/login', { username: 'admin', password: PASSWORD });
  assert.equal(login.status, 200);
  const session = apiClient(g, { ...bearer(login.body.token), 'user-agent': 'audit-test-browser' });
  const provider = await session('POST', '/api/providers', { provider: 'openai', keys: [{ name: 'main', value: 'sk-live-abcdefghijklmnopqrstuvwxyz0123', weight: 1 }] });
  assert.ok(provider.status < 300, provider.text);
  assert.equal((await session('POST', '/api/session/logout')).status, 200);

  const sessionTrail = await records('?resource=session');
  const [logout, ok, failed] = sessionTrail;
  assert.deepEqual([logout.action, ok.action, failed.action], ['logout', 'login', 'login_failed']);
  assert.equal(failed.outcome, 'denied');
  assert.equal(failed.actor.name, 'admin');
  assert.equal(failed.actor.user_agent, 'audit-test-browser');
  assert.match(failed.actor.remote_address ?? '', /127\.0\.0\.1/);
  assert.equal(ok.actor.type, 'session');
  assert.match(ok.actor.session_id ?? '', /^[0-9a-f]{16}$/);
  assert.equal(logout.actor.session_id, ok.actor.session_id, 'the logout names the session the login opened');
  assert.ok(!JSON.stringify(sessionTrail).includes(PASSWORD) && !JSON.stringify(sessionTrail).includes('wrong'));

  const [created] = await records('?resource=providers&action=create');
  assert.equal(created.actor.session_id, ok.actor.session_id);
  const sent = JSON.stringify(created.details);
  assert.ok(!sent.includes('sk-live-abcdefghijklmnopqrstuvwxyz0123'), sent);
  assert.match(sent, /sk-\.\.\.0123/);
});

test('a reload of config.json is recorded with the paths it changed', async () => {
  g.writeConfig({ ...config, client: { drop_excess_requests: true } });
  await eventually(async () => {
    const [reload] = await records('?action=reload');
    assert.ok(reload, 'a reload record');
    assert.equal(reload.actor.type, 'system');
    assert.deepEqual((reload.details as { changed: string[] }).changed, ['client']);
  }, 5000);
});

test('search filters by time, pages with a cursor, and exports JSON lines of every record', async () => {
  const all = await admin<AuditLogList>('GET', '/api/audit-logs?limit=1000');
  const total = all.body.total_count;
  assert.ok(total >= 8, `${total} records`);
  const first = await admin<AuditLogList>('GET', '/api/audit-logs?limit=3');
  assert.equal(first.body.records.length, 3);
  assert.ok(first.body.next_cursor);
  const second = await admin<AuditLogList>('GET', `/api/audit-logs?limit=3&cursor=${first.body.next_cursor}`);
  assert.ok(second.body.records[0].seq < first.body.records[2].seq);
  assert.equal(second.body.total_count, total);
  const future = await admin<AuditLogList>(`GET`, `/api/audit-logs?start_time=${new Date(Date.now() + 60_000).toISOString()}`);
  assert.deepEqual(future.body.records, []);
  const bad = await admin<ApiError>('GET', '/api/audit-logs?start_time=yesterday');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.param, 'start_time');
  assert.equal((await admin<ApiError>('GET', '/api/audit-logs?colour=red')).body.error.param, 'colour');

  const res = await fetch(`${g.url}/api/audit-logs/export`, { headers: basic('admin', PASSWORD) });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /application\/x-ndjson/);
  const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as AuditRecordView);
  assert.ok(lines.length >= total);
  // Oldest first, each linking to the one before.
  for (let i = 1; i < lines.length; i++) {
    assert.equal(lines[i].seq, lines[i - 1].seq + 1);
    assert.equal(lines[i].prev_hash, lines[i - 1].hash);
  }
});

test('verification passes, then names the record edited in the database and the one after a removed record', async () => {
  const ok = await admin<AuditVerifyAnswer>('GET', '/api/audit-logs/verify');
  assert.equal(ok.status, 200);
  assert.equal(ok.body.valid, true, JSON.stringify(ok.body));
  assert.ok(ok.body.records_checked >= 8);
  const db = new DatabaseSync(join(g.appDir, 'logs.db'), { timeout: 5000 });
  try {
    const original = (db.prepare('SELECT actor_name FROM audit_logs WHERE seq = 3').get() as { actor_name: string | null }).actor_name;
    // The database refuses an edit; whoever owns the file can drop the trigger, and verification shows what they did.
    assert.throws(() => db.prepare("UPDATE audit_logs SET actor_name = 'someone else' WHERE seq = 3").run(), /append-only/);
    db.exec('DROP TRIGGER audit_logs_no_update');
    db.prepare("UPDATE audit_logs SET actor_name = 'someone else' WHERE seq = 3").run();
    const edited = await admin<AuditVerifyAnswer>('GET', '/api/audit-logs/verify');
    assert.equal(edited.body.valid, false);
    assert.equal(edited.body.first_broken?.seq, 3);
    assert.equal(edited.body.first_broken?.reason, 'hash_mismatch');
    // Put back, then remove a record instead.
    db.prepare('UPDATE audit_logs SET actor_name = ? WHERE seq = 3').run(original);
    assert.equal((await admin<AuditVerifyAnswer>('GET', '/api/audit-logs/verify')).body.valid, true, 'put back, it verifies again');
    db.prepare('DELETE FROM audit_logs WHERE seq = 5').run();
    const removed = await admin<AuditVerifyAnswer>('GET', '/api/audit-logs/verify');
    assert.equal(removed.body.valid, false);
    assert.equal(removed.body.first_broken?.seq, 6);
    assert.equal(removed.body.first_broken?.reason, 'missing_records');
  } finally {
    db.close();
  }
});

test('retention deletes the oldest records, leaves an attested checkpoint, and the chain still verifies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-audit-'));
  const store = await openSqliteStore(join(dir, 'logs.db'));
  let now = Date.UTC(2025, 0, 1);
  const audit = new AuditLog(store.driver, { settings: () => ({ retention_days: 30 }), now: () => now, firstDelayMs: 3_600_000 });
  try {
    for (let i = 0; i < 5; i++) await audit.record({ actor: { type: 'admin', name: 'admin' }, action: 'update', resource: 'config', outcome: 'success', details: { i } });
    now += 40 * 86_400_000;
    await audit.record({ actor: { type: 'admin', name: 'admin' }, action: 'update', resource: 'config', outcome: 'success', details: { i: 5 } });
    assert.equal(await audit.sweep(), 5);
    const v = await audit.store.verify(undefined);
    assert.equal(v.valid, true, JSON.stringify(v));
    assert.equal(v.checkpoint?.through_seq, 5);
    const left = await audit.store.search({}, 10);
    assert.deepEqual(left.records.map((r) => r.action), ['retention', 'update']);
    assert.deepEqual((left.records[0].details as { through_seq: number; deleted: number }).deleted, 5);
    // Without the checkpoint the first record left links to nothing known.
    await store.driver.execute('DELETE FROM audit_checkpoints');
    const gone = await audit.store.verify(undefined);
    assert.equal(gone.valid, false);
    assert.equal(gone.first_broken?.seq, 6);
    // Records removed from the head with a checkpoint forged to match (its hash is right) are still
    // found: no chained retention record attests that checkpoint.
    const [six] = await store.driver.query('SELECT hash FROM audit_logs WHERE seq = 6');
    await store.driver.execute('DELETE FROM audit_logs WHERE seq = 6');
    await store.driver.execute('INSERT INTO audit_checkpoints (through_seq, hash, deleted, created_at) VALUES (6, ?, 6, 0)', [six.hash]);
    const forged = await audit.store.verify(undefined);
    assert.equal(forged.valid, false);
    assert.equal(forged.first_broken?.seq, 7);
    assert.match(forged.first_broken?.message ?? '', /no chained retention record attests/);
  } finally {
    await audit.close();
    await store.close();
  }
});
