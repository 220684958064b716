// /api over a configuration owned by Kubernetes: reads mark what came from custom resources, every
// write answers 409 (naming the resource when the path names one), the session endpoints still work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler } from '../../proxy/src/api/app.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/source.ts';
import { ConfigService } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';

const document = {
  providers: { openai: { keys: [{ name: 'k', value: 'env.OPENAI_K', weight: 1 }] } },
  governance: {
    routing_rules: [{ id: 'premium', name: 'premium', cel_expression: 'true', targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }] }],
    teams: [{ id: 'search', name: 'Search' }],
  },
};
const origin = {
  managedBy: 'kubernetes' as const,
  editWith: 'the Skybridge custom resources (gateway.skybridge.dev) with kubectl',
  sources: { 'providers/openai': 'Provider gw/openai', 'routing_rules/premium': 'RoutingRule team-a/premium' },
};

let server: Server;
let base: string;

before(async () => {
  const empty = checkConfig({}, 'empty');
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(empty.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: empty.raw });
  await service.replace(document, { source: 'kubernetes', env: { OPENAI_K: 'sk-1' }, origin });
  server = createServer(createApiHandler(service));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const message = (b: Record<string, unknown>) => (b.error as { message: string }).message;

test('objects from custom resources are listed with managed_by and source; others are not marked', async () => {
  const rules = await call('GET', '/api/routing/rules');
  assert.equal(rules.status, 200);
  const [rule] = rules.body.rules as Array<Record<string, unknown>>;
  assert.equal(rule.managed_by, 'kubernetes');
  assert.equal(rule.source, 'RoutingRule team-a/premium');
  const one = await call('GET', '/api/governance/routing-rules/premium');
  assert.equal((one.body.rule as Record<string, unknown>).source, 'RoutingRule team-a/premium');
  const teams = await call('GET', '/api/governance/teams');
  const [team] = teams.body.teams as Array<Record<string, unknown>>;
  assert.equal(team.managed_by, undefined);
  const provider = await call('GET', '/api/providers/openai');
  assert.equal(provider.body.source, 'Provider gw/openai');
});

test('a write to an object from a custom resource answers 409 naming it and the kubectl command', async () => {
  for (const path of ['/api/routing/rules/premium', '/api/governance/routing-rules/premium']) {
    const res = await call('PUT', path, { name: 'premium' });
    assert.equal(res.status, 409, path);
    assert.equal((res.body.error as { type: string }).type, 'conflict_error');
    assert.match(message(res.body), /routing rule 'premium' is managed by Kubernetes \(RoutingRule team-a\/premium\).*kubectl edit routingrules\.gateway\.skybridge\.dev premium -n team-a/);
  }
  const del = await call('DELETE', '/api/providers/openai/keys/whatever');
  assert.equal(del.status, 409);
  assert.match(message(del.body), /Provider gw\/openai/);
});

test('every other write answers 409 too, pointing at kubectl; an invalid body does not get past it', async () => {
  const team = await call('PUT', '/api/governance/teams/search', { name: 42 });
  assert.equal(team.status, 409);
  assert.match(message(team.body), /managed by Kubernetes and \/api is read-only: change the Skybridge custom resources \(gateway\.skybridge\.dev\) with kubectl/);
  const create = await call('POST', '/api/providers', { provider: 'anthropic', keys: [] });
  assert.equal(create.status, 409);
});

test('the session endpoints are not configuration writes', async () => {
  const login = await call('POST', '/api/session/login', { username: 'a', password: 'b' });
  assert.equal(login.status, 403, 'auth is not enabled: the usual answer, not a 409');
});
