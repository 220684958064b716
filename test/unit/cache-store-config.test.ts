// `vector_store.config` of the redis and postgres cache stores: the reference fields, env.VAR
// values, and errors that name the field without echoing secrets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRedisStoreConfig } from '../../proxy/src/cache/redis-store.ts';
import { parsePgStoreConfig, tableName } from '../../proxy/src/cache/pg-store.ts';
import { StoreConfigError } from '../../proxy/src/cache/store-config.ts';

test('redis: addr, username, password and db, with env.VAR values; unknown reference fields are accepted', () => {
  const env = { REDIS_PW: 's3cret-pw', REDIS_DB: '3' };
  const cfg = parseRedisStoreConfig({ addr: 'cache.internal:6380', username: 'gw', password: 'env.REDIS_PW', db: 'env.REDIS_DB', pool_size: 10 }, env);
  assert.deepEqual(cfg, { addr: 'cache.internal:6380', username: 'gw', password: 's3cret-pw', db: 3, tls: undefined });
});

test('redis: a missing addr, a bad port, an unset env var or a bad db is an error naming the field, never the secret', () => {
  const fails = (raw: Record<string, unknown>, param: string, why: RegExp): void => {
    assert.throws(() => parseRedisStoreConfig(raw, {}), (err: unknown) => {
      assert.ok(err instanceof StoreConfigError);
      assert.equal(err.param, param);
      assert.match(err.message, new RegExp(`^vector_store\\.config\\.${param}: `));
      assert.match(err.message, why);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
  };
  fails({}, 'addr', /is required/);
  fails({ addr: 'localhost:99999', password: 'hunter2' }, 'addr', /port/);
  fails({ addr: 'localhost:6379', password: 'env.NOT_SET' }, 'password', /environment variable NOT_SET is not set/);
  fails({ addr: 'localhost:6379', db: 99 }, 'db', /integer from 0 to 15/);
  fails({ addr: 'localhost:6379', password: 42 }, 'password', /must be a string/);
});

test('postgres: the postgres logs_store fields, port as a string or number, env.VAR values', () => {
  const cfg = parsePgStoreConfig({ host: 'db', port: '5433', user: 'gw', password: 'env.PG_PW', db_name: 'cache', ssl_mode: 'require', max_open_conns: 8 }, { PG_PW: 'pw' });
  assert.deepEqual(cfg, { host: 'db', port: 5433, user: 'gw', password: 'pw', db_name: 'cache', ssl_mode: 'require', max_open_conns: 8 });
  assert.throws(() => parsePgStoreConfig({ host: 'db', user: 'gw', db_name: 'c' }), /vector_store\.config\.port: is required/);
  assert.throws(() => parsePgStoreConfig({ host: 'db', port: 5432, user: 'gw', db_name: 'c', ssl_mode: 'sometimes' }), /vector_store\.config\.ssl_mode: must be one of disable/);
  assert.throws(() => parsePgStoreConfig({ port: 5432, user: 'gw', db_name: 'c' }), /vector_store\.config\.host: is required/);
});

test('postgres: each namespace has its own valid table name, whatever its characters', () => {
  const a = tableName('BifrostSemanticCachePlugin');
  assert.match(a, /^skybridge_cache_bifrostsemanticcacheplugin_[0-9a-f]{10}$/);
  assert.notEqual(tableName('team a'), tableName('team-a'));
  assert.ok(tableName('x'.repeat(300)).length <= 63);
});
