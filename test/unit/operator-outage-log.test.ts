// The operator's watches during an API-server outage: one warning, not one line per retry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OutageLog } from '../../operator/src/outage-log.ts';

function recorder() {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  return { lines, logger: { warn: at('warn'), info: at('info'), debug: at('debug') } };
}

test('an outage of 100 failed watch restarts is one warning, then one line when a watch lists again', () => {
  const { lines, logger } = recorder();
  let now = 1_000;
  const outage = new OutageLog('watch failed, restarting', logger, () => now);
  for (let i = 0; i < 100; i++) outage.failed({ resource: `/apis/x/${i % 9}`, error: 'connect ECONNREFUSED', retry_in_ms: 500 });
  now += 30_000;
  outage.recovered();
  outage.recovered();
  const visible = lines.filter((l) => l.level !== 'debug');
  assert.deepEqual(visible.map((l) => [l.level, l.msg]), [['warn', 'watch failed, restarting'], ['info', 'watch failed, restarting: recovered']]);
  assert.equal(visible[0].fields?.resource, '/apis/x/0');
  assert.deepEqual(visible[1].fields, { failures: 100, outage_ms: 30_000 });
  assert.equal(lines.filter((l) => l.level === 'debug').length, 99);
  // The next outage warns again.
  outage.failed({ resource: '/apis/x/1', error: 'timeout', retry_in_ms: 100 });
  assert.equal(lines.at(-1)?.level, 'warn');
});
