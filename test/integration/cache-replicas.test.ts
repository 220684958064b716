// The response cache on the two shared stores (Redis Stack with RediSearch, PostgreSQL with pgvector),
// end to end through two gateway replicas each: an answer cached by one replica is a hit on the
// other (direct, with its keys reordered, and semantic, by a paraphrase), two virtual keys never
// share entries, a clear on one replica is seen by the other, and entries survive a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startRedisStack } from '../helpers/redis-stack.ts';
import { startPgvector } from '../helpers/pgvector.ts';

const VK_A = 'sk-bf-replica-alpha-0123456789';
const VK_B = 'sk-bf-replica-bravo-0123456789';

let mock: MockProvider;
before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  await mock?.close();
});

function config(vectorStore: Record<string, unknown>): Record<string, unknown> {
  const vk = (id: string, value: string) => ({ id, name: id, value, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }] });
  return {
    providers: mockProviders(mock.url),
    governance: { virtual_keys: [vk('vk-alpha', VK_A), vk('vk-bravo', VK_B)] },
    vector_store: vectorStore,
    plugins: [{ name: 'semantic_cache', enabled: true, config: { provider: 'openai', embedding_model: 'text-embedding-3-small-dim256', dimension: 256, ttl: '5m', threshold: 0.8 } }],
  };
}

interface Answer {
  status: number;
  debug?: { cache_hit: boolean; cache_id: string; hit_type?: string; similarity?: number };
}

async function ask(g: RunningGateway, body: string, vk: string, key: string): Promise<Answer> {
  const res = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': vk, 'x-bf-cache-key': key }, body });
  const json = (await res.json()) as { extra_fields?: { cache_debug?: Answer['debug'] } };
  return { status: res.status, debug: json.extra_fields?.cache_debug };
}

const STORES: [string, () => Promise<{ vectorStore: Record<string, unknown>; stop(): Promise<void> }>][] = [
  ['Redis Stack', async () => {
    const r = await startRedisStack();
    return { vectorStore: { enabled: true, type: 'redis', config: { addr: r.addr } }, stop: () => r.stop() };
  }],
  ['PostgreSQL with pgvector', async () => {
    const p = await startPgvector();
    return { vectorStore: { enabled: true, type: 'postgres', config: p.storeConfig }, stop: () => p.stop() };
  }],
];

for (const [name, start] of STORES) {
  describe(`the cache on ${name}, shared by two replicas`, () => {
    let store: Awaited<ReturnType<typeof start>>;
    let a: RunningGateway;
    let b: RunningGateway;
    before(async () => {
      store = await start();
      [a, b] = await Promise.all([startGateway(config(store.vectorStore)), startGateway(config(store.vectorStore))]);
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await store?.stop();
    });

    test('a miss on one replica is a direct hit on the other (keys reordered), semantic for a paraphrase, never for another VK', async () => {
      const key = `shared-${Date.now()}`;
      const first = await ask(a, JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'What is the capital of France?' }], temperature: 1 }), VK_A, key);
      assert.equal(first.status, 200);
      assert.equal(first.debug?.cache_hit, false);
      const upstream = mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
      // Same request, members in another order and 1.0 for 1: the canonical hash is the same.
      const reordered = JSON.stringify({ temperature: 1.0, messages: [{ content: 'What is the capital of France?', role: 'user' }], model: 'openai/gpt-4o' });
      let direct: Answer | undefined;
      await eventually(async () => {
        direct = await ask(b, reordered, VK_A, key);
        assert.equal(direct.debug?.cache_hit, true, JSON.stringify(direct));
      }, 3000);
      assert.equal(direct!.debug?.hit_type, 'direct');
      assert.equal(direct!.debug?.cache_id, first.debug?.cache_id);
      const semantic = await ask(b, JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: "what's the capital city of France" }], temperature: 1 }), VK_A, key);
      assert.equal(semantic.debug?.cache_hit, true, JSON.stringify(semantic));
      assert.equal(semantic.debug?.hit_type, 'semantic');
      assert.ok((semantic.debug?.similarity ?? 0) >= 0.8);
      assert.equal(mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length, upstream, 'hits make no chat call upstream');
      const other = await ask(b, reordered, VK_B, key);
      assert.equal(other.debug?.cache_hit, false, 'another virtual key never reads these entries');
    });

    test('a clear by key on one replica is seen by the other', async () => {
      const key = `clear-${Date.now()}`;
      const body = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Name three primary colours.' }] });
      await ask(a, body, VK_A, key);
      await eventually(async () => assert.equal((await ask(b, body, VK_A, key)).debug?.cache_hit, true), 3000);
      const res = await fetch(`${a.url}/api/cache/clear-by-key/${encodeURIComponent(key)}`, { method: 'DELETE' });
      assert.equal(res.status, 200, await res.text());
      assert.equal((await ask(b, body, VK_A, key)).debug?.cache_hit, false);
    });
  });
}
