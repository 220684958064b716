// `logs_store` in the gateway config: the reference shape is accepted, mistakes are named by path,
// and the configuration decides which store opens (SQLite in the app directory by default).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { logsStoreTarget, openRequestLogs } from '../../proxy/src/logs/open.ts';

const providers = { openai: { keys: [{ name: 'k', value: 'sk-x' }] } };
const PG = { host: 'db.internal', port: '5432', user: 'skybridge', password: 'env.PG_PASSWORD', db_name: 'logs', ssl_mode: 'require' };

function problems(cfg: Record<string, unknown>): string[] {
  try {
    checkConfig(cfg, 'test', { PG_PASSWORD: 'secret' });
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.errors.map((e) => e.path);
  }
}

test('the reference logs_store shapes are accepted, env references resolved', () => {
  const pg = checkConfig({ providers, logs_store: { enabled: true, type: 'postgres', config: PG } }, 'test', { PG_PASSWORD: 'secret' });
  assert.equal(logsStoreTarget(pg.config, '/app')?.type, 'postgres');
  assert.equal((pg.config.logs_store?.config as { password: string }).password, 'secret');
  const lite = checkConfig({ providers, logs_store: { enabled: true, type: 'sqlite', config: { path: 'data/logs.db' } }, client: { log_retention_days: 30 } }, 'test', {});
  assert.deepEqual(logsStoreTarget(lite.config, '/app'), { type: 'sqlite', path: '/app/data/logs.db' });
  const off = checkConfig({ providers, logs_store: { enabled: false, type: 'sqlite', config: { path: '/x.db' } } }, 'test', {});
  assert.equal(logsStoreTarget(off.config, '/app'), undefined);
  assert.deepEqual(logsStoreTarget(checkConfig({ providers }, 'test', {}).config, '/app', {}), { type: 'sqlite', path: '/app/logs.db' }, 'on embedded defaults: SQLite in the app dir');
  assert.equal(logsStoreTarget(checkConfig({ providers, client: { enable_logging: false } }, 'test', {}).config, '/app', {}), undefined, 'one setting turns it off');
  assert.equal(logsStoreTarget(checkConfig({ providers }, 'test', {}).config, '/app', {}, false), undefined, 'Kubernetes: no embedded default');
});

test('logs_store mistakes are refused naming the field', () => {
  assert.ok(problems({ providers, logs_store: { enabled: true, type: 'mysql', config: {} } }).some((p) => p.startsWith('logs_store')));
  assert.ok(problems({ providers, logs_store: { enabled: true, type: 'postgres', config: { ...PG, ssl_mode: 'sometimes' } } }).some((p) => p.startsWith('logs_store')));
  assert.ok(problems({ providers, logs_store: { enabled: true, type: 'postgres', config: { host: 'h' } } }).some((p) => p.startsWith('logs_store')));
  assert.ok(problems({ providers, client: { log_retention_days: 0 } }).includes('client.log_retention_days'));
});

test('openRequestLogs opens the configured SQLite file and writes through its writer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-logs-open-'));
  try {
    const cfg = checkConfig({ providers, logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs/requests.db' } } }, 'test', {});
    const logs = await openRequestLogs(cfg.config, dir, { flushIntervalMs: 1 });
    assert.ok(logs);
    logs.writer.enqueue({ id: 'x', timestamp: Date.now(), object: 'chat.completion', status: 'success' });
    await logs.writer.flush();
    assert.equal((await logs.store.get('x'))?.id, 'x');
    await logs.close();
    assert.ok(existsSync(join(dir, 'logs/requests.db')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
