// The optional subsystems cost nothing until configured: the plain gateway (one provider; no
// logging, cache, governance, MCP or Kubernetes) serves chats and streams without loading their
// code or their packages, and a gateway that uses one (request logs, then the management API) does
// load it, which shows the recording sees what loads late. The gateway runs as users run it (its
// own process), with a preload that writes down every module it loaded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProvider } from '../helpers/providers.ts';

const RECORDER = new URL('../helpers/module-recorder.ts', import.meta.url).pathname;

/** What a plain gateway must not load, by the module URLs that would show it. */
const OPTIONAL: [what: string, url: RegExp][] = [
  ['the Kubernetes client', /\/node_modules\/@kubernetes\/client-node\//],
  ['the Kubernetes configuration source', /\/proxy\/src\/config\/kube-source\.ts$/],
  ['the MCP SDK', /\/node_modules\/@modelcontextprotocol\/sdk\//],
  ['the Redis client', /\/node_modules\/(@redis\/|redis\/)/],
  ['the PostgreSQL client', /\/node_modules\/pg\//],
  ['the management API', /\/node_modules\/express\/|\/proxy\/src\/api\/app\.ts$/],
  ['multipart parsing', /\/node_modules\/busboy\//],
  ['Bedrock signing and event streams', /\/node_modules\/@smithy\//],
  ['SQLite', /^node:sqlite$/],
  ['request-log stores', /\/proxy\/src\/logs\/(sqlite|postgres)-(store|driver)\.ts$/],
  ['response-cache stores', /\/proxy\/src\/cache\/(sqlite|redis|pg)-store\.ts$/],
  ['MCP call logs', /\/proxy\/src\/mcp\/call-store\.ts$/],
  ['webhook delivery', /\/proxy\/src\/webhooks\/(start|dispatcher|sender)\.ts$|\/node_modules\/standardwebhooks\//],
  ['async job workers', /\/proxy\/src\/async\/(jobs|worker)\.ts$/],
  ['the skills repository\'s YAML parser', /\/node_modules\/yaml\//],
  ['the WebRTC stack', /\/node_modules\/(@node-datachannel\/|node-datachannel\/)/],
  ['the CEL interpreter and RE2 (routing rules)', /\/node_modules\/(@marcbachmann\/cel-js|re2js)\//],
  // The provider calls take undici's dispatcher and request files alone (upstream/pools.ts,
  // upstream/dispatched-answer.ts): its index would load fetch, WebSocket and the caches too.
  ["undici's package index (fetch, WebSocket, caches)", /\/node_modules\/undici\/(index\.js$|lib\/web\/)/],
];

let mock: MockProvider;
const running: RunningGateway[] = [];
before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await Promise.all(running.map((g) => g.stop()));
  await mock.close();
});

/** The modules a gateway with `client` loaded while `work` ran, from its start to its exit. */
async function modulesLoaded(client: Record<string, unknown>, work: (g: RunningGateway) => Promise<void>, extra: Record<string, unknown> = {}): Promise<string[]> {
  const file = join(mkdtempSync(join(tmpdir(), 'skybridge-modules-')), 'modules.txt');
  const g = await startGateway(
    { providers: { openai: mockProvider(mock.url, 'openai') }, client, ...extra },
    { env: { NODE_OPTIONS: `--import ${RECORDER}`, SKYBRIDGE_TEST_MODULES_FILE: file } },
  );
  running.push(g);
  try {
    await work(g);
  } finally {
    await g.stop();
  }
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

async function chat(g: RunningGateway, stream: boolean): Promise<void> {
  const res = await request(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hello' }], stream }),
  });
  const text = await res.body.text();
  assert.equal(res.statusCode, 200, text);
  if (stream) assert.ok(text.endsWith('data: [DONE]\n\n'));
}

const found = (modules: readonly string[], url: RegExp) => modules.filter((m) => url.test(m));

test('the plain gateway serves chats and streams without loading any optional subsystem', async () => {
  const modules = await modulesLoaded({ enable_logging: false }, async (g) => {
    await chat(g, false);
    await chat(g, true);
    const health = await request(`${g.url}/health`);
    await health.body.dump();
    assert.equal(health.statusCode, 200);
  });
  // The recording works: what serving a chat needs is in it.
  assert.ok(found(modules, /\/proxy\/src\/operations\/chat\.ts$/).length === 1, 'the chat operation was loaded');
  assert.ok(found(modules, /\/node_modules\/undici\//).length > 0, 'undici was loaded');
  for (const [what, url] of OPTIONAL) assert.deepEqual(found(modules, url), [], `${what} loaded by a gateway that does not use it`);
});

test('a gateway that uses request logs and the management API loads them', async () => {
  const modules = await modulesLoaded({ enable_logging: true, disable_content_logging: true }, async (g) => {
    await chat(g, true);
    const res = await request(`${g.url}/api/logs?limit=1`);
    await res.body.dump();
    assert.equal(res.statusCode, 200);
  });
  assert.ok(found(modules, /\/proxy\/src\/logs\/sqlite-store\.ts$/).length === 1, 'the SQLite log store was loaded');
  assert.ok(found(modules, /^node:sqlite$/).length === 1, 'node:sqlite was loaded');
  assert.ok(found(modules, /\/proxy\/src\/api\/app\.ts$/).length === 1, 'the management API was loaded');
  assert.ok(found(modules, /\/node_modules\/express\//).length > 0, 'express was loaded');
});

test('a gateway with a routing rule loads the CEL interpreter and RE2', async () => {
  const rule = { name: 'gpt-only', cel_expression: 'model.matches("^gpt-4")', targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }] };
  const modules = await modulesLoaded({ enable_logging: false }, (g) => chat(g, false), { governance: { routing_rules: [rule] } });
  assert.ok(found(modules, /\/node_modules\/@marcbachmann\/cel-js\//).length > 0, 'the CEL interpreter was loaded');
  assert.ok(found(modules, /\/node_modules\/re2js\//).length > 0, 'RE2 was loaded');
});
