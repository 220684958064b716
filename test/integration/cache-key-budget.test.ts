// A virtual key's cache entries are bounded in bytes (plugin max_bytes_per_key): past the bound
// that key's oldest entries are evicted, other keys' entries stay, an entry larger than the whole
// bound is not written, and GET /api/cache/stats reports both. A real gateway on the embedded
// SQLite store; entry sizes are read from its file, so the bound is set in entries, not guessed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient } from '../helpers/api.ts';
import { mockProviders } from '../helpers/providers.ts';

const VK_A = 'sk-bf-budget-a-0123456789';
const VK_B = 'sk-bf-budget-b-0123456789';
const grants = [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }];
/** Room for two of the mock's chat answers (about 850 bytes each as stored, checked below), not three. */
const BOUND = 2000;

let mock: MockProvider;
let gw: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  gw = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'sqlite', config: { path: 'cache.db' } },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '1h', max_bytes_per_key: BOUND } }],
    governance: {
      virtual_keys: [
        { id: 'budget-a', name: 'budget-a', value: VK_A, provider_configs: grants },
        { id: 'budget-b', name: 'budget-b', value: VK_B, provider_configs: grants },
      ],
    },
  });
});

after(async () => {
  await gw?.stop();
  await mock?.close();
});

type Debug = { cache_hit: boolean; hit_type?: string };

async function ask(vk: string, content: string, extra: Record<string, string> = {}): Promise<Debug | undefined> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': vk, 'x-bf-cache-key': 'budget', 'x-bf-cache-type': 'direct', ...extra },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { extra_fields?: { cache_debug?: Debug } }).extra_fields?.cache_debug;
}

/** Sizes of the stored entries (the value the ledger counts), read from the store's file. */
function storedSizes(): number[] {
  const db = new DatabaseSync(join(gw.appDir, 'cache.db'), { readOnly: true });
  try {
    const tables = db.prepare('SELECT table_name FROM cache_namespaces').all() as { table_name: string }[];
    return tables.flatMap((t) => (db.prepare(`SELECT length(CAST(value AS BLOB)) AS n FROM ${t.table_name}`).all() as { n: number }[]).map((r) => Number(r.n)));
  } finally {
    db.close();
  }
}

const stats = async () => (await apiClient(gw)<{ key_budget: { evicted: number; skipped: number }; writes: number }>('GET', '/api/cache/stats')).body;

test("past max_bytes_per_key a key's oldest entries are evicted; another key's entries stay", async () => {
  // Key B's entry first: it must survive everything key A writes.
  await ask(VK_B, 'question b');
  await eventually(async () => assert.equal((await ask(VK_B, 'question b', { 'x-bf-cache-no-store': 'true' }))?.cache_hit, true), 10_000);
  const sizes = storedSizes();
  assert.ok(sizes.every((n) => 2 * n <= BOUND && 3 * n > BOUND), `the bound holds two entries, not three: ${sizes.join(', ')}`);

  for (const q of ['question a1', 'question a2', 'question a3']) {
    await ask(VK_A, q);
    await eventually(async () => assert.equal((await ask(VK_A, q, { 'x-bf-cache-no-store': 'true' }))?.cache_hit, true), 10_000);
  }
  // a1 was evicted to make room for a3; a2 and a3 are served; B's entry is untouched.
  assert.equal((await ask(VK_A, 'question a1', { 'x-bf-cache-no-store': 'true' }))?.cache_hit, false);
  assert.equal((await ask(VK_A, 'question a2', { 'x-bf-cache-no-store': 'true' }))?.cache_hit, true);
  assert.equal((await ask(VK_A, 'question a3', { 'x-bf-cache-no-store': 'true' }))?.cache_hit, true);
  assert.equal((await ask(VK_B, 'question b', { 'x-bf-cache-no-store': 'true' }))?.cache_hit, true);
  assert.equal(storedSizes().length, 3);
  const s = await stats();
  assert.equal(s.key_budget.evicted, 1);
  assert.equal(s.key_budget.skipped, 0);
});

test('an entry larger than the whole bound is not written, and is counted as skipped', async () => {
  // The mock's answer repeats the question, so a long question makes an answer past the bound.
  const long = 'a long question '.repeat(120);
  await ask(VK_B, long);
  await eventually(async () => assert.equal((await stats()).key_budget.skipped, 1), 10_000);
  assert.equal((await ask(VK_B, long, { 'x-bf-cache-no-store': 'true' }))?.cache_hit, false);
  // Key B's earlier entry was not evicted for it.
  assert.equal((await ask(VK_B, 'question b', { 'x-bf-cache-no-store': 'true' }))?.cache_hit, true);
});
