import { test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredConditions, nextStatus, statusChanged, timestamp, type ResourceStatus } from '../../operator/src/status.ts';
import { parseOperatorCli } from '../../operator/src/cli.ts';

const valid = { accepted: true, reason: 'Valid', message: 'ok' };
const missing = { accepted: false, reason: 'SecretNotFound', message: 'spec.valueFrom: Secret default/x not found' };
const rendered = { ok: true as const, revision: 'a'.repeat(64) };
const t0 = new Date('2025-03-01T10:00:00.123Z');
const t1 = new Date('2025-03-01T10:05:00Z');
const t2 = new Date('2025-03-01T10:09:00Z');

const byType = (s: ResourceStatus, type: string) => s.conditions.find((c) => c.type === type);

test('first status: Accepted and Ready with observedGeneration and a seconds-precision transition time', () => {
  const s = nextStatus(undefined, desiredConditions(valid, rendered), 3, t0);
  assert.equal(s.observedGeneration, 3);
  assert.deepEqual(byType(s, 'Accepted'), { type: 'Accepted', status: 'True', reason: 'Valid', message: 'ok', observedGeneration: 3, lastTransitionTime: '2025-03-01T10:00:00Z' });
  assert.deepEqual(byType(s, 'Ready'), {
    type: 'Ready',
    status: 'True',
    reason: 'Rendered',
    message: 'Included in the configuration the proxies load.',
    observedGeneration: 3,
    lastTransitionTime: '2025-03-01T10:00:00Z',
  });
  assert.equal(timestamp(t0), '2025-03-01T10:00:00Z');
});

test('lastTransitionTime moves only when a condition flips; reason or message changes keep it', () => {
  const s0 = nextStatus(undefined, desiredConditions(valid, rendered), 1, t0);
  // Same verdict later: nothing to write.
  const same = nextStatus(s0, desiredConditions(valid, rendered), 1, t1);
  assert.equal(statusChanged(s0, same), false);
  // Another CR changing the configuration does not touch this status.
  assert.equal(statusChanged(s0, nextStatus(s0, desiredConditions(valid, { ok: true, revision: 'b'.repeat(64) }), 1, t1)), false);
  // A new generation with the same outcome: observedGeneration moves, times do not.
  const gen2 = nextStatus(s0, desiredConditions(valid, { ok: true, revision: 'b'.repeat(64) }), 2, t1);
  assert.equal(statusChanged(s0, gen2), true);
  assert.equal(byType(gen2, 'Ready')?.lastTransitionTime, '2025-03-01T10:00:00Z');
  assert.equal(byType(gen2, 'Ready')?.observedGeneration, 2);
  // Rejected: both flip to False at t2.
  const bad = nextStatus(gen2, desiredConditions(missing, rendered), 3, t2);
  assert.deepEqual(
    { status: byType(bad, 'Accepted')?.status, reason: byType(bad, 'Accepted')?.reason, message: byType(bad, 'Accepted')?.message, at: byType(bad, 'Accepted')?.lastTransitionTime },
    { status: 'False', reason: 'SecretNotFound', message: missing.message, at: '2025-03-01T10:09:00Z' },
  );
  assert.deepEqual([byType(bad, 'Ready')?.status, byType(bad, 'Ready')?.reason], ['False', 'NotAccepted']);
  // Still rejected, for another reason: the status stays False, so the time stays.
  const other = nextStatus(bad, desiredConditions({ accepted: false, reason: 'InvalidSpec', message: 'spec.x: bad' }, rendered), 4, new Date('2025-03-02T00:00:00Z'));
  assert.equal(byType(other, 'Accepted')?.reason, 'InvalidSpec');
  assert.equal(byType(other, 'Accepted')?.lastTransitionTime, '2025-03-01T10:09:00Z');
});

test('a failed write keeps Accepted but makes Ready False with RenderFailed', () => {
  const s = nextStatus(undefined, desiredConditions(valid, { ok: false, message: 'Writing the rendered configuration failed: 503' }), 1, t0);
  assert.equal(byType(s, 'Accepted')?.status, 'True');
  assert.deepEqual([byType(s, 'Ready')?.status, byType(s, 'Ready')?.reason, byType(s, 'Ready')?.message], ['False', 'RenderFailed', 'Writing the rendered configuration failed: 503']);
});

test('conditions of other types are kept; long messages are cut', () => {
  const foreign: ResourceStatus = { conditions: [{ type: 'Audited', status: 'True', reason: 'Ok', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' }] };
  const s = nextStatus(foreign, desiredConditions({ accepted: false, reason: 'InvalidSpec', message: 'x'.repeat(10_000) }, rendered), 1, t0);
  assert.deepEqual(s.conditions.map((c) => c.type), ['Accepted', 'Ready', 'Audited']);
  assert.ok((byType(s, 'Accepted')?.message.length ?? 0) <= 4000);
});

test('operator CLI: namespace required, watch list, lease duration and metrics port', () => {
  assert.throws(() => parseOperatorCli([], {}), /--namespace is required/);
  const o = parseOperatorCli(['--namespace', 'gw', '--watch-namespaces', 'b,a,b', '--metrics-port', '0', '--lease-duration', '3'], {});
  assert.ok(o !== 'help');
  assert.deepEqual([o.namespace, o.watchNamespaces, o.metricsPort, o.leaseDurationMs], ['gw', ['a', 'b'], 0, 3000]);
  const d = parseOperatorCli([], { POD_NAMESPACE: 'pods' });
  assert.ok(d !== 'help');
  assert.deepEqual([d.namespace, d.watchNamespaces, d.metricsPort, d.leaseDurationMs, d.resyncMs], ['pods', ['pods'], 9090, 6000, 300000]);
  const all = parseOperatorCli(['--namespace', 'gw', '--watch-namespaces', '*'], {});
  assert.ok(all !== 'help');
  assert.equal(all.watchNamespaces, 'all');
  assert.throws(() => parseOperatorCli(['--namespace', 'Bad_NS'], {}), /namespace name/);
  assert.throws(() => parseOperatorCli(['--namespace', 'gw', '--lease-duration', '0'], {}), /--lease-duration/);
  assert.equal(parseOperatorCli(['-h'], {}), 'help');
});

test('operator CLI: Secrets by label or by name, not both', () => {
  const byLabel = parseOperatorCli(['--namespace', 'gw', '--secret-selector', 'skybridge.dev/credentials=true'], {});
  assert.ok(byLabel !== 'help');
  assert.deepEqual([byLabel.secretSelector, byLabel.secretNames], ['skybridge.dev/credentials=true', undefined]);
  const byName = parseOperatorCli(['--namespace', 'gw', '--secret-names', 'llm-credentials, team-b-key,llm-credentials'], {});
  assert.ok(byName !== 'help');
  assert.deepEqual(byName.secretNames, ['llm-credentials', 'team-b-key']);
  assert.throws(() => parseOperatorCli(['--namespace', 'gw', '--secret-names', 'Bad_Name'], {}), /--secret-names must be Secret names/);
  assert.throws(() => parseOperatorCli(['--namespace', 'gw', '--secret-names', 'a', '--secret-selector', 'x=y'], {}), /cannot be combined/);
});
