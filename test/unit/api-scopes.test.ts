// Every /api route declares the scope it needs: the test walks the management API's real route
// table (the express app createApiApp builds, every optional router mounted) and fails on any route
// not below a router mounted through scoped(), or whose declaration resolves to no scope. Then the
// scope rules themselves: read_only, area:read and area:write, admin.
import { after, test } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import assert from 'node:assert/strict';
import { createApiApp } from '../../proxy/src/api/app.ts';
import { grants, needFor, scopeName, SCOPE, type Need, type ScopeDeclaration } from '../../proxy/src/api/scopes.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/source.ts';
import { ConfigService } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';
import { McpManager } from '../../proxy/src/mcp/manager.ts';
import { MemoryCounterStore } from '../../proxy/src/governance/counters/memory.ts';
import { MANAGEMENT_AREAS, type ManagementScope } from '../../proxy/src/schema/management.ts';
import { validator } from '../../proxy/src/schema/validate.ts';
import { IssueManagementKeySchema } from '../../proxy/src/schema/management.ts';
import { openSqliteStore } from '../../proxy/src/logs/sqlite-store.ts';
import type { SqlLogStore } from '../../proxy/src/logs/sql-store.ts';

interface Layer {
  handle: { stack?: Layer[]; [SCOPE]?: ScopeDeclaration };
  rawPath?: unknown;
  route?: { path: string | string[]; methods: Record<string, boolean>; stack: Layer[] };
}

interface RouteSeen {
  method: string;
  path: string;
  /** The path below the scoped router's mount (what its guard sees). */
  relative: string;
  decl: ScopeDeclaration | undefined;
}

const join = (a: string, b: string): string => `${a}/${b}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');

/** Every (method, path) of the app, with the scope declaration of the router it is mounted below. */
function walk(stack: readonly Layer[], prefix: string, decl: ScopeDeclaration | undefined, mount: string, out: RouteSeen[]): RouteSeen[] {
  for (const layer of stack) {
    const raw = typeof layer.rawPath === 'string' ? layer.rawPath : '/';
    if (layer.route) {
      for (const p of [layer.route.path].flat()) {
        for (const m of Object.keys(layer.route.methods).filter((k) => k !== '_all')) {
          const path = join(prefix, p);
          out.push({ method: m.toUpperCase(), path, relative: path.slice(mount.length) || '/', decl });
        }
      }
      continue;
    }
    const inner = layer.handle.stack;
    if (!Array.isArray(inner)) continue;
    const here = join(prefix, raw);
    const own = layer.handle[SCOPE];
    walk(inner, here, own ?? decl, own ? here : mount, out);
  }
  return out;
}

// A real logs store, so the routers that only exist with one (/api/logs) are in the table too.
const stores: SqlLogStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.close()));
});

async function fullApp() {
  const loaded = checkConfig({ governance: { auth_config: { is_enabled: true, admin_username: 'a', admin_password: 'b' } } }, 'test');
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(loaded.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: loaded.raw });
  const store = await openSqliteStore(joinPath(mkdtempSync(joinPath(tmpdir(), 'skybridge-scopes-')), 'logs.db'));
  stores.push(store);
  return createApiApp(service, { store, dropped: () => 0 }, undefined, new McpManager(), undefined, new MemoryCounterStore());
}

test('every /api route is mounted below a scoped router and resolves to a scope', async () => {
  const app = (await fullApp()) as unknown as { router: { stack: Layer[] } };
  const routes = walk(app.router.stack, '', undefined, '', []).filter((r) => r.path.startsWith('/api'));
  // A walk that found nothing would prove nothing: the table has well over a hundred routes.
  assert.ok(routes.length > 100, `only ${routes.length} routes found`);
  for (const path of ['/api/logs/:id', '/api/governance/virtual-keys/:id', '/api/audit-logs/verify', '/api/management-keys/:id', '/api/mcp/client/:id/reconnect', '/api/session/login', '/api/config']) {
    assert.ok(routes.some((r) => r.path === path), `${path} is in the walk`);
  }
  const undeclared = routes.filter((r) => r.decl === undefined || needFor(r.decl, r.method, r.relative) === undefined).map((r) => `${r.method} ${r.path}`);
  assert.deepEqual(undeclared, []);
  // The ones that only read or are open are few and named.
  const needs = new Map(routes.map((r) => [`${r.method} ${r.path}`, scopeName(needFor(r.decl!, r.method, r.relative)!)]));
  assert.equal(needs.get('POST /api/session/login'), 'public');
  assert.equal(needs.get('GET /api/session/is-auth-enabled'), 'public');
  assert.equal(needs.get('POST /api/routing/rules/test'), 'routing:read');
  assert.equal(needs.get('POST /api/governance/virtual-keys'), 'governance:write');
  assert.equal(needs.get('GET /api/audit-logs'), 'audit:read');
  assert.equal(needs.get('POST /api/management-keys'), 'admin');
  assert.equal(needs.get('GET /api/models'), 'providers:read');
  assert.equal(needs.get('GET /api/version'), 'authenticated');
  assert.equal(needs.get('POST /api/mcp/client/:id/reconnect'), 'mcp:write');
  const publicRoutes = [...needs].filter(([, n]) => n === 'public').map(([r]) => r).sort();
  assert.deepEqual(publicRoutes, ['GET /api/session/is-auth-enabled', 'POST /api/session/login']);
});

test('the walk notices a route mounted without a declaration', async () => {
  const app = (await fullApp()) as unknown as { router: { stack: Layer[] }; get(path: string, h: () => void): void };
  app.get('/api/sneaky', () => undefined);
  const routes = walk(app.router.stack, '', undefined, '', []);
  assert.deepEqual(routes.filter((r) => r.decl === undefined && r.path.startsWith('/api')).map((r) => `${r.method} ${r.path}`), ['GET /api/sneaky']);
});

test('scopes: write includes read, read_only reads everything, admin is everything, nothing else leaks', () => {
  const read = (area: (typeof MANAGEMENT_AREAS)[number]): Need => ({ area, access: 'read' });
  const write = (area: (typeof MANAGEMENT_AREAS)[number]): Need => ({ area, access: 'write' });
  const has = (scopes: ManagementScope[], need: Need) => grants(scopes, need);
  assert.equal(has(['governance:write'], read('governance')), true);
  assert.equal(has(['governance:write'], write('governance')), true);
  assert.equal(has(['governance:read'], write('governance')), false);
  assert.equal(has(['governance:write'], write('providers')), false);
  assert.equal(has(['read_only'], read('audit')), true);
  assert.equal(has(['read_only'], write('cache')), false);
  assert.equal(has(['read_only'], { access: 'admin' }), false);
  assert.equal(has(['logs:read', 'cache:write'], { access: 'authenticated' }), true);
  assert.equal(has(['admin'], { access: 'admin' }), true);
  assert.equal(has(['admin'], write('webhooks')), true);
  assert.equal(grants(undefined, { access: 'admin' }), true);
});

test('the issue body takes only known scopes and names the bad one', () => {
  const check = validator(IssueManagementKeySchema);
  assert.ok(!Array.isArray(check({ name: 'ci', scopes: ['governance:write', 'read_only'] })));
  const errors = check({ name: 'ci', scopes: ['governance:write', 'governance:delete'] });
  assert.ok(Array.isArray(errors));
  assert.ok(errors.some((e) => e.path === 'scopes[1]'), JSON.stringify(errors));
  assert.ok(Array.isArray(check({ name: '', scopes: ['read_only'] })));
  assert.ok(Array.isArray(check({ name: 'x', scopes: [] })));
});
