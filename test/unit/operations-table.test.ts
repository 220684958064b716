// The operations table and what is built from it: each operation once, served under every
// OpenAI-format prefix by one shared handler, async and Azure routes where the row says so, and
// every provider capability mapped to its allowed_requests key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALLOWED_REQUEST_KEYS, OPENAI_PREFIXES, OPERATIONS } from '../../proxy/src/unified/operations.ts';
import { OPERATION_ROUTES } from '../../proxy/src/operations/specs.ts';
import { buildRoutes, NATIVE_ROUTES } from '../../proxy/src/routes.ts';
import { asyncRoutes } from '../../proxy/src/endpoints/async.ts';
import { AZURE_PATTERNS } from '../../proxy/src/endpoints/native/azure.ts';
import { PROVIDER_KINDS } from '../../proxy/src/providers/catalog.ts';

test('each operation appears once, by name and by path, with its spec', () => {
  assert.equal(new Set(OPERATIONS.map((o) => o.name)).size, OPERATIONS.length);
  assert.equal(new Set(OPERATIONS.map((o) => o.path)).size, OPERATIONS.length);
  for (const op of OPERATIONS) {
    const route = OPERATION_ROUTES.get(op.name);
    assert.ok(route, `${op.name} has a spec`);
    assert.equal(route.requestType, op.requestType);
    assert.equal(route.op, op);
  }
});

test('every operation is served under every OpenAI-format prefix by one handler', () => {
  const { routes, patterns } = buildRoutes(NATIVE_ROUTES);
  for (const op of OPERATIONS) {
    if ('ownRoute' in op) {
      // Served at the Videos API's own paths instead (the remix's source id in its path).
      const own = op.name === 'video_remix' ? 'videos/video_abc/remix' : op.path;
      for (const p of OPENAI_PREFIXES) {
        const path = `${p}/${own}`;
        assert.ok(routes[path]?.POST ?? patterns.find(([re]) => re.test(path))?.[1].POST, `${op.name} at ${path}`);
      }
      if (op.name === 'video_remix') assert.equal(routes['/v1/videos/remix'], undefined, 'no route at /v1/videos/remix: the source is in the path');
      continue;
    }
    const handlers = new Set(OPENAI_PREFIXES.map((p) => routes[`${p}/${op.path}`]?.POST));
    assert.equal(handlers.size, 1, `${op.name}: one handler under ${OPENAI_PREFIXES.join(', ')}`);
    assert.ok([...handlers][0], `${op.name} is served`);
  }
});

test('the async routes are the rows that may run async, under every prefix', () => {
  const { routes, patterns } = asyncRoutes(undefined);
  for (const op of OPERATIONS) {
    for (const p of OPENAI_PREFIXES) assert.equal(routes[`${p}/async/${op.path}`] !== undefined, op.async, `${p}/async/${op.path}`);
  }
  // The remix is submitted at the Videos API's own shape too, and polled at its row's path.
  for (const p of OPENAI_PREFIXES) {
    assert.ok(patterns.find(([re]) => re.test(`${p}/async/videos/video_0123/remix`))?.[1].POST, `${p}/async/videos/{id}/remix`);
    assert.ok(patterns.find(([re]) => re.test(`${p}/async/videos/remix/job-1`))?.[1].GET, `${p}/async/videos/remix/{job_id}`);
  }
});

test("a capability's allowed_requests key is its first row's request type", () => {
  assert.equal(ALLOWED_REQUEST_KEYS.video_generation, 'video_generation');
  assert.equal(ALLOWED_REQUEST_KEYS.decisions, 'decision');
});

test('Azure deployment routes: the table rows marked azure, a longer path before one it ends', () => {
  const served = (path: string) => AZURE_PATTERNS.find(([re]) => re.test(`/openai/openai/deployments/my-dep/${path}`))?.[0].source.replaceAll('\\/', '/');
  for (const op of OPERATIONS) {
    const source = served(op.path);
    if (op.azure) assert.ok(source?.endsWith(`/${op.path}$`), `${op.path} is served as itself, not by ${source}`);
    else assert.equal(source, undefined, `${op.path} is not an Azure route`);
  }
});

test('every capability a provider declares has an allowed_requests key', () => {
  for (const [name, kind] of Object.entries(PROVIDER_KINDS)) {
    for (const op of kind.operations) assert.ok(ALLOWED_REQUEST_KEYS[op], `${name}: ${op}`);
  }
});
