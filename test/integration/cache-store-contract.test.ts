// The response cache's store contract (proxy/src/cache/store.ts), one test body run against every
// store on a real engine: the embedded SQLite file, Redis Stack (RediSearch) and PostgreSQL with
// pgvector, each started here as a throw-away server. Vectors come from the mock provider's
// embeddings, so "similar" means what it means to a semantic cache.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DimensionMismatchError, type CacheEntry, type CacheStore } from '../../proxy/src/cache/store.ts';
import { SqliteCacheStore } from '../../proxy/src/cache/sqlite-store.ts';
import { openRedisCacheStore } from '../../proxy/src/cache/redis-store.ts';
import { openPgCacheStore } from '../../proxy/src/cache/pg-store.ts';
import { embedText } from '../mock-provider/embeddings.ts';
import { startRedisStack, type RunningRedisStack } from '../helpers/redis-stack.ts';
import { startPgvector, type RunningPgvector } from '../helpers/pgvector.ts';
import { redisCommand, startRedis } from '../helpers/redis.ts';
import { freePort } from '../helpers/ports.ts';
import { eventually, patience } from '../helpers/patience.ts';

const DIM = 64;
const FRANCE = 'What is the capital of France?';
const FRANCE_PARAPHRASE = "what's the capital city of France";
const BREAD = 'How do I bake sourdough bread?';

interface Backend {
  name: 'sqlite' | 'redis' | 'postgres';
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A new client on the same data (another replica, or the same process after a restart). */
  open(): CacheStore;
  /** Several processes share it (sqlite is one process's store). */
  shared: boolean;
}

function sqliteBackend(): Backend {
  let dir = '';
  return {
    name: 'sqlite',
    shared: false,
    start: async () => {
      dir = mkdtempSync(join(tmpdir(), 'skybridge-cache-contract-'));
    },
    stop: async () => rmSync(dir, { recursive: true, force: true }),
    open: () => new SqliteCacheStore(join(dir, 'cache.db')),
  };
}

function redisBackend(): Backend & { server: () => RunningRedisStack } {
  let server: RunningRedisStack | undefined;
  return {
    name: 'redis',
    shared: true,
    start: async () => {
      server = await startRedisStack();
    },
    stop: async () => server?.stop(),
    open: () => openRedisCacheStore({ addr: server!.addr }),
    server: () => server!,
  };
}

function pgBackend(): Backend {
  let server: RunningPgvector | undefined;
  return {
    name: 'postgres',
    shared: true,
    start: async () => {
      server = await startPgvector();
    },
    stop: async () => server?.stop(),
    open: () => openPgCacheStore(server!.storeConfig),
  };
}

let seq = 0;
function entry(scope: string, text: string, over: Partial<CacheEntry> = {}): CacheEntry {
  const now = Date.now();
  return {
    id: randomUUID(),
    scope,
    cacheKey: 'key-a',
    hash: createHash('sha256').update(`${text}#${seq++}`).digest('hex'),
    vector: embedText(text, DIM),
    value: JSON.stringify({ answer: text }),
    createdAt: now,
    expiresAt: now + 60_000,
    ...over,
  };
}

function contract(b: Backend): void {
  describe(`${b.name} cache store`, () => {
    const stores: CacheStore[] = [];
    const open = (): CacheStore => {
      const s = b.open();
      stores.push(s);
      return s;
    };
    let store: CacheStore;
    let nsSeq = 0;
    /** A fresh namespace per test: tests never see each other's entries. */
    const ns = async (dimension = DIM, s = store): Promise<string> => {
      const name = `ns-${b.name}-${process.pid}-${nsSeq++}`;
      await s.init(name, dimension);
      return name;
    };

    before(async () => {
      await b.start();
      store = open();
    });
    after(async () => {
      for (const s of stores) await s.close().catch(() => undefined);
      await b.stop();
    });

    test('put then getDirect returns the entry; another hash or another scope misses', async () => {
      const n = await ns();
      const e = entry('vk1|key-a|openai|gpt-4o', FRANCE);
      await store.put(n, e);
      const got = await store.getDirect(n, e.scope, e.hash, Date.now());
      assert.ok(got);
      assert.deepEqual({ ...got, vector: undefined }, { ...e, vector: undefined });
      assert.equal(await store.getDirect(n, e.scope, createHash('sha256').update('other').digest('hex'), Date.now()), undefined);
      assert.equal(await store.getDirect(n, 'vk2|key-a|openai|gpt-4o', e.hash, Date.now()), undefined);
    });

    test('nearest finds a paraphrase above the threshold, with its cosine similarity; not an unrelated text, not under a stricter threshold', async () => {
      const n = await ns();
      const e = entry('s', FRANCE);
      await store.put(n, e);
      await store.put(n, entry('s', BREAD));
      const query = embedText(FRANCE_PARAPHRASE, DIM);
      let cos = 0;
      for (let i = 0; i < DIM; i++) cos += query[i] * e.vector![i];
      const hit = await store.nearest(n, 's', query, 0.8, Date.now());
      assert.ok(hit, 'paraphrase should hit');
      assert.equal(hit.entry.id, e.id);
      assert.equal(hit.entry.value, e.value);
      assert.ok(Math.abs(hit.similarity - cos) < 1e-3, `similarity ${hit.similarity} vs cosine ${cos}`);
      assert.equal(await store.nearest(n, 's', query, Math.min(1, cos + 0.02), Date.now()), undefined);
      assert.equal(await store.nearest(n, 's', embedText('Explain quantum entanglement simply', DIM), 0.8, Date.now()), undefined);
      const exact = await store.nearest(n, 's', embedText(FRANCE, DIM), 0.99, Date.now());
      assert.equal(exact?.entry.id, e.id);
      assert.ok(exact.similarity > 0.999);
    });

    test('nearest only sees its own scope, even among many closer entries of other scopes', async () => {
      const n = await ns();
      const mine = entry('tenant-a', FRANCE_PARAPHRASE);
      await store.put(n, mine);
      // Exact matches of the query in 300 other scopes: an index that filters after taking the
      // first candidates would find none of tenant-a's.
      for (let i = 0; i < 300; i++) await store.put(n, entry(`tenant-b${i}`, FRANCE));
      const hit = await store.nearest(n, 'tenant-a', embedText(FRANCE, DIM), 0.8, Date.now());
      assert.equal(hit?.entry.id, mine.id);
      assert.equal(await store.nearest(n, 'tenant-c', embedText(FRANCE, DIM), 0.1, Date.now()), undefined);
    });

    test('nearest in a large scope (1,200 entries) finds the one entry a paraphrase is about', async () => {
      const n = await ns();
      const words = 'capital france weather forecast recipe bread train ticket hotel booking password reset invoice refund laptop battery poem ocean river history'.split(' ');
      const text = (i: number): string => `${words[i % 20]} ${words[(i * 7) % 20]} ${words[(i * 13) % 20]} item${i}`;
      const ids: string[] = [];
      for (let i = 0; i < 1200; i += 100) {
        const batch = Array.from({ length: 100 }, (_, j) => entry('big', text(i + j)));
        ids.push(...batch.map((e) => e.id));
        await Promise.all(batch.map((e) => store.put(n, e)));
      }
      for (const i of [3, 777, 1199]) {
        const hit = await store.nearest(n, 'big', embedText(`Please, ${text(i).toUpperCase()}?`, DIM), 0.8, Date.now());
        assert.equal(hit?.entry.id, ids[i], `entry ${i}`);
      }
      assert.equal(await store.nearest(n, 'big', embedText('zebra xylophone quokka', DIM), 0.8, Date.now()), undefined);
    });

    test('an entry is missed at and after expiresAt; sweep removes expired entries only', async () => {
      const n = await ns();
      const now = Date.now();
      const old = entry('s', FRANCE, { expiresAt: now + 30_000 });
      const live = entry('s', BREAD, { expiresAt: now + 120_000 });
      await store.put(n, old);
      await store.put(n, live);
      assert.ok(await store.getDirect(n, 's', old.hash, now + 29_999));
      assert.equal(await store.getDirect(n, 's', old.hash, now + 30_000), undefined);
      assert.ok(await store.nearest(n, 's', old.vector!, 0.99, now + 29_999));
      const later = await store.nearest(n, 's', old.vector!, 0.99, now + 30_000);
      assert.notEqual(later?.entry.id, old.id);
      assert.equal(await store.sweep(n, now + 30_000), 1);
      assert.equal(await store.getDirect(n, 's', old.hash, now), undefined, 'swept entries are gone');
      assert.ok(await store.getDirect(n, 's', live.hash, now));
    });

    test('deleteById removes one entry (1, then 0); deleteByKey every entry of that cache key', async () => {
      const n = await ns();
      const a1 = entry('s1', FRANCE, { cacheKey: 'team-a' });
      const a2 = entry('s2', BREAD, { cacheKey: 'team-a' });
      const b1 = entry('s1', BREAD, { cacheKey: 'team-b' });
      for (const e of [a1, a2, b1]) await store.put(n, e);
      assert.equal(await store.deleteById(n, a1.id), 1);
      assert.equal(await store.deleteById(n, a1.id), 0);
      assert.equal(await store.getDirect(n, 's1', a1.hash, Date.now()), undefined);
      await store.put(n, a1);
      assert.equal(await store.deleteByKey(n, 'team-a'), 2);
      assert.equal(await store.getDirect(n, 's2', a2.hash, Date.now()), undefined);
      assert.equal(await store.nearest(n, 's1', a1.vector!, 0.99, Date.now()), undefined);
      assert.ok(await store.getDirect(n, 's1', b1.hash, Date.now()), 'other keys are kept');
      assert.equal(await store.deleteByKey(n, 'team-a'), 0);
    });

    test('put replaces by id, and an older entry of the same scope and hash', async () => {
      const n = await ns();
      const e = entry('s', FRANCE);
      await store.put(n, e);
      await store.put(n, { ...e, value: 'second' });
      assert.equal((await store.getDirect(n, 's', e.hash, Date.now()))?.value, 'second');
      const newer = { ...e, id: randomUUID(), value: 'third', createdAt: e.createdAt + 1 };
      await store.put(n, newer);
      assert.equal((await store.getDirect(n, 's', e.hash, Date.now()))?.id, newer.id);
      assert.equal(await store.deleteById(n, e.id), 0, 'the older entry was replaced');
    });

    test('direct-only namespaces (dimension 1) keep entries without vectors; nearest finds nothing', async () => {
      const n = await ns(1);
      const e = entry('s', FRANCE, { vector: undefined });
      await store.put(n, e);
      assert.equal((await store.getDirect(n, 's', e.hash, Date.now()))?.id, e.id);
      assert.equal(await store.nearest(n, 's', new Float32Array([1]), 0, Date.now()), undefined);
      assert.equal(await store.deleteByKey(n, 'key-a'), 1);
    });

    test('init of an existing namespace with another dimension throws DimensionMismatchError with the spec message', async () => {
      const n = await ns(DIM);
      const other = open();
      await assert.rejects(other.init(n, 32), (err: unknown) => {
        assert.ok(err instanceof DimensionMismatchError);
        assert.equal(err.existing, DIM);
        assert.equal(err.required, 32);
        assert.equal(err.message, `namespace ${n} already exists with dimension ${DIM} but the config requires 32`);
        return true;
      });
      const direct = await ns(1);
      await assert.rejects(open().init(direct, DIM), /already exists with dimension 1 but the config requires 64/);
      await other.init(n, DIM);
    });

    test('drop removes the namespace and its entries; it can then be created with another dimension', async () => {
      const n = await ns();
      const e = entry('s', FRANCE);
      await store.put(n, e);
      await store.drop(n);
      await store.init(n, 16);
      assert.equal(await store.getDirect(n, 's', e.hash, Date.now()), undefined);
      await store.drop(n);
      await store.drop(n);
    });

    test('entries survive closing the store and opening it again', async () => {
      const first = open();
      const n = await ns(DIM, first);
      const e = entry('s', FRANCE);
      await first.put(n, e);
      await first.close();
      const again = open();
      await again.init(n, DIM);
      assert.equal((await again.getDirect(n, 's', e.hash, Date.now()))?.value, e.value);
      assert.equal((await again.nearest(n, 's', embedText(FRANCE_PARAPHRASE, DIM), 0.8, Date.now()))?.entry.id, e.id);
    });

    if (b.shared) {
      test('two clients (replicas) on one store see each other\'s writes and deletes', async () => {
        const a = store;
        const r2 = open();
        const n = await ns(DIM, a);
        await r2.init(n, DIM);
        const e = entry('s', FRANCE);
        await a.put(n, e);
        assert.equal((await r2.getDirect(n, 's', e.hash, Date.now()))?.id, e.id);
        assert.equal((await r2.nearest(n, 's', embedText(FRANCE_PARAPHRASE, DIM), 0.8, Date.now()))?.entry.id, e.id);
        assert.equal(await r2.deleteByKey(n, 'key-a'), 1);
        assert.equal(await a.getDirect(n, 's', e.hash, Date.now()), undefined);
      });
    }
  });
}

contract(sqliteBackend());
const redis = redisBackend();
contract(redis);
contract(pgBackend());

describe('redis cache store: Redis itself expires entries, and they survive a server restart', () => {
  let server: RunningRedisStack;
  let store: CacheStore;
  before(async () => {
    server = await startRedisStack();
    store = openRedisCacheStore({ addr: server.addr });
  });
  after(async () => {
    await store.close();
    await server.stop();
  });

  test('a hash is gone from Redis once its expiresAt has passed (PEXPIREAT)', async () => {
    await store.init('exp', DIM);
    // The life is stretched with the machine's load: a put slower than it would find the hash gone
    // already. The expiry is then polled for (Redis drops the hash on the first access past it).
    const e = entry('s', FRANCE, { expiresAt: Date.now() + patience(500) });
    await store.put('exp', e);
    assert.equal(await redisCommand(server.port, `EXISTS exp:${e.id}`), ':1');
    await eventually(async () => assert.equal(await redisCommand(server.port, `EXISTS exp:${e.id}`), ':0'), 5000);
  });

  test('a db other than 0 is refused at init with the reason (RediSearch indexes live in db 0)', async () => {
    const other = openRedisCacheStore({ addr: server.addr, db: 2 });
    try {
      await assert.rejects(other.init('db2', DIM), /vector_store\.config\.db: RediSearch keeps indexes in database 0 only/);
    } finally {
      await other.close();
    }
  });

  test('after a restart of the server the index and entries are back', async () => {
    await store.init('persist', DIM);
    const e = entry('s', FRANCE);
    await store.put('persist', e);
    await server.restart();
    const again = openRedisCacheStore({ addr: server.addr });
    try {
      await again.init('persist', DIM);
      // RediSearch re-indexes the loaded hashes in the background.
      let hit;
      for (let i = 0; i < 50 && !hit; i++) {
        hit = await again.nearest('persist', 's', embedText(FRANCE_PARAPHRASE, DIM), 0.8, Date.now());
        if (!hit) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(hit?.entry.id, e.id);
      assert.equal((await again.getDirect('persist', 's', e.hash, Date.now()))?.id, e.id);
    } finally {
      await again.close();
    }
  });
});

describe('redis cache store: a server it cannot use fails init with a clear error, never hangs', () => {
  test('nothing listening at addr: init rejects within a few seconds, naming the address', async () => {
    const store = openRedisCacheStore({ addr: `127.0.0.1:${await freePort()}` });
    const started = Date.now();
    await assert.rejects(store.init('x', DIM), /cannot reach Redis at 127\.0\.0\.1:\d+/);
    assert.ok(Date.now() - started < 8000);
    // A lookup after that fails at once (a miss), it does not wait again.
    const again = Date.now();
    await assert.rejects(store.getDirect('x', 's', 'ab', Date.now()), /cannot reach Redis/);
    assert.ok(Date.now() - again < 500);
    await store.close();
  });

  test('a Redis without the search module (plain redis-server): init says what is needed', async () => {
    const plain = await startRedis();
    const store = openRedisCacheStore({ addr: plain.addr });
    try {
      await assert.rejects(store.init('x', DIM), new RegExp(`has no search module \\(FT\\.\\* commands\\), which semantic mode \\(dimension ${DIM}\\) needs: use Redis Stack`));
    } finally {
      await store.close();
      await plain.stop();
    }
  });
});

describe('redis cache store on plain Redis (no search module): direct-only entries without an index', () => {
  let plain: Awaited<ReturnType<typeof startRedis>> | undefined;
  let store: CacheStore | undefined;
  before(async () => {
    plain = await startRedis();
    store = openRedisCacheStore({ addr: plain.addr });
    await store.init('plainns', 1);
  });
  after(async () => {
    await store?.close();
    await plain?.stop();
  });

  test('written, found by scope and hash, one live entry per hash, cleared by key and by id, expired, dropped', async () => {
    const s = store!;
    const now = Date.now();
    const a = entry('scope-a', FRANCE, { vector: undefined, cacheKey: 'key-a' });
    await s.put('plainns', a);
    assert.equal((await s.getDirect('plainns', 'scope-a', a.hash, now))?.id, a.id);
    assert.equal((await s.getDirect('plainns', 'scope-a', a.hash, now))?.value, a.value);
    assert.equal(await s.getDirect('plainns', 'scope-b', a.hash, now), undefined, 'another scope misses');
    assert.equal(await s.nearest('plainns', 'scope-a', new Float32Array(DIM), 0, now), undefined, 'no semantic lookups');
    // The same request written again replaces the entry.
    const a2 = entry('scope-a', FRANCE, { vector: undefined, cacheKey: 'key-a', hash: a.hash });
    await s.put('plainns', a2);
    assert.equal((await s.getDirect('plainns', 'scope-a', a2.hash, now))?.id, a2.id);
    assert.equal(await redisCommand(plain!.port, `EXISTS plainns:${a.id}`), ':0');
    assert.equal(await s.deleteById('plainns', a.id), 0);
    // Expired entries are not served, and Redis removes them itself.
    const short = entry('scope-a', BREAD, { vector: undefined, cacheKey: 'key-s', expiresAt: Date.now() + 300 });
    await s.put('plainns', short);
    assert.equal(await s.getDirect('plainns', 'scope-a', short.hash, short.expiresAt), undefined);
    const other = entry('scope-c', BREAD, { vector: undefined, cacheKey: 'key-c' });
    await s.put('plainns', other);
    assert.equal(await s.deleteByKey('plainns', 'key-a'), 1, 'the live entry of the key (the replaced one is gone already)');
    assert.equal(await s.getDirect('plainns', 'scope-a', a2.hash, Date.now()), undefined);
    assert.equal((await s.getDirect('plainns', 'scope-c', other.hash, Date.now()))?.id, other.id, 'another cache key is kept');
    assert.equal(await s.deleteById('plainns', other.id), 1);
    assert.equal(await s.getDirect('plainns', 'scope-c', other.hash, Date.now()), undefined);
    await s.put('plainns', entry('scope-d', FRANCE, { vector: undefined }));
    await s.drop('plainns');
    assert.equal(await redisCommand(plain!.port, 'DBSIZE'), ':0', 'drop leaves nothing of the namespace');
  });

  test('semantic mode is refused at init, saying what it needs', async () => {
    await assert.rejects(store!.init('plainsem', DIM), /no search module .* semantic mode \(dimension 64\) needs/);
  });
});
