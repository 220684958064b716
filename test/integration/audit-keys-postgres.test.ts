// Management keys and the audit log on a shared PostgreSQL store (a throw-away server), two gateways
// on one database as two replicas: a key issued on one works on the other at once, a revocation on
// one ends it on the other within a second; writes made concurrently on both land in one chain that
// verifies; a record edited in the database directly is named by verification on either replica.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { apiClient, basic, bearer, type Api } from '../helpers/api.ts';
import { eventually, patience } from '../helpers/patience.ts';
import type { AuditLogList, AuditVerifyAnswer, IssuedManagementKey } from '../../proxy/src/api/answers.ts';

const PASSWORD = 'audit-pg-admin-password';
let server: RunningPostgres;
let a: InProcessGateway;
let b: InProcessGateway;
let adminA: Api;
let adminB: Api;

before(async () => {
  server = await startPostgres();
  const config = {
    logs_store: { enabled: true, type: 'postgres', config: { host: server.host, port: String(server.port), user: server.user, password: '', db_name: server.database, ssl_mode: 'disable' } },
    governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: PASSWORD } },
  };
  a = await startGateway(config);
  b = await startGateway(config);
  adminA = apiClient(a, basic('admin', PASSWORD));
  adminB = apiClient(b, basic('admin', PASSWORD));
});

after(async () => {
  await a?.stop();
  await b?.stop();
  await server?.stop();
});

test('a key issued on one replica works on the other; revoked on one, it stops on the other within a second', async () => {
  const issued = await adminA<IssuedManagementKey>('POST', '/api/management-keys', { name: 'shared', scopes: ['providers:read'] });
  assert.equal(issued.status, 201, issued.text);
  const onB = apiClient(b, bearer(issued.body.value));
  // Not polled by B yet: looked up once by its digest.
  assert.equal((await onB('GET', '/api/providers')).status, 200);
  assert.equal((await onB('GET', '/api/governance/teams')).status, 403);

  const revokedAt = Date.now();
  assert.equal((await adminA('DELETE', `/api/management-keys/${issued.body.id}`)).status, 200);
  let status = 200;
  let elapsed = 0;
  while (status === 200) {
    status = (await onB('GET', '/api/providers')).status;
    elapsed = Date.now() - revokedAt;
    if (status === 200) {
      assert.ok(elapsed < patience(3000), `still accepted ${elapsed} ms after the revocation`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  assert.equal(status, 401);
  // The replicas poll every 500 ms: within a second on an idle machine (stretched by the load factor on a busy one).
  assert.ok(elapsed < patience(1000), `revoked on A, refused by B after ${elapsed} ms`);
  console.log(`# revocation took effect on the other replica after ${elapsed} ms`);
});

test('concurrent writes on both replicas form one chain that verifies on either', async () => {
  const writes = [...Array(15).keys()].flatMap((i) => [adminA('POST', '/api/governance/customers', { name: `a-${i}` }), adminB('POST', '/api/governance/customers', { name: `b-${i}` })]);
  const answers = await Promise.all(writes);
  // Redis is not configured: each replica keeps its own configuration, so every create succeeds.
  for (const r of answers) assert.equal(r.status, 201, r.text);
  await eventually(async () => {
    const list = await adminA<AuditLogList>('GET', '/api/audit-logs?resource=governance/customers&action=create&limit=1');
    assert.equal(list.body.total_count, 30);
  }, 10_000);
  for (const admin of [adminA, adminB]) {
    const v = await admin<AuditVerifyAnswer>('GET', '/api/audit-logs/verify');
    assert.equal(v.body.valid, true, JSON.stringify(v.body));
    assert.ok(v.body.records_checked >= 32);
  }
  // One sequence, no gap, no fork: every record's seq is distinct and they run 1..n.
  const exported = await (await fetch(`${b.url}/api/audit-logs/export`, { headers: basic('admin', PASSWORD) })).text();
  const seqs = exported.trim().split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
});

test('a record edited in the database is named by verification on both replicas', async () => {
  const client = new pg.Client({ host: server.host, port: server.port, user: server.user, database: server.database });
  await client.connect();
  try {
    const forge = () => client.query('UPDATE audit_logs SET details = $1 WHERE seq = 4', [JSON.stringify({ request: { name: 'forged' } })]);
    // Refused by the trigger; the database's owner can drop it, and verification shows the edit.
    await assert.rejects(forge(), /append-only/);
    await client.query('DROP TRIGGER audit_logs_no_update ON audit_logs');
    await forge();
  } finally {
    await client.end();
  }
  for (const admin of [adminA, adminB]) {
    const v = await admin<AuditVerifyAnswer>('GET', '/api/audit-logs/verify');
    assert.equal(v.body.valid, false);
    assert.equal(v.body.first_broken?.seq, 4);
    assert.equal(v.body.first_broken?.reason, 'hash_mismatch');
  }
});
