// The bounds behind the metrics an operator charts first: spend labels (virtual key and team ids)
// and MCP tool labels fall back to `other` past their bounds; headroom gauges cover the limits of
// virtual keys and teams themselves, at most MAX_SPENDERS owners per level, and read usage from the
// counter store (its last seen values when it cannot answer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SPENDERS, Metrics } from '../../proxy/src/metrics/metrics.ts';
import { headroom, ownedLimits } from '../../proxy/src/governance/limit-metrics.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { MemoryCounterStore } from '../../proxy/src/governance/counters/memory.ts';
import type { CounterStore } from '../../proxy/src/governance/counters/store.ts';

test('spend labels: ids of their own up to the bound, then other; no id is ""', () => {
  const m = new Metrics({ processMetrics: false });
  assert.equal(m.spenderLabel(undefined), '');
  for (let i = 0; i < MAX_SPENDERS; i++) assert.equal(m.spenderLabel(`vk-${i}`), `vk-${i}`);
  assert.equal(m.spenderLabel('one-too-many'), 'other');
  assert.equal(m.spenderLabel('vk-7'), 'vk-7', 'a known id keeps its label');
});

test('MCP tool labels: the first 500 (client, tool) pairs, then other', async () => {
  const m = new Metrics({ processMetrics: false });
  for (let i = 0; i < 500; i++) m.toolCalled('c', `t${i}`, 'success', 0.01);
  m.toolCalled('c', 'late', 'timeout', 1);
  const text = await m.registry.metrics();
  assert.match(text, /skybridge_mcp_tool_calls_total\{client="c",tool="t499",outcome="success"\} 1/);
  assert.match(text, /skybridge_mcp_tool_calls_total\{client="c",tool="other",outcome="timeout"\} 1/);
  assert.doesNotMatch(text, /tool="late"/);
});

const snapshot = (keys: number) =>
  compileSnapshot(
    checkConfig(
      {
        governance: {
          budgets: [{ id: 'b', max_limit: 10, reset_duration: '1d' }, { id: 'tb', max_limit: 100, reset_duration: '1d' }],
          rate_limits: [{ id: 'r', request_max_limit: 5, request_reset_duration: '1h', token_max_limit: 100, token_reset_duration: '1h' }],
          teams: [{ id: 'team', name: 'team', budget_id: 'tb' }, { id: 'no-limits', name: 'no-limits' }],
          virtual_keys: Array.from({ length: keys }, (_, i) => ({ id: `k${i}`, name: `k${i}`, value: `sk-bf-key-${i}-0123456789`, budget_id: 'b', rate_limit_id: 'r', team_id: 'team' })),
        },
      },
      'test',
    ).config,
  );

test('headroom covers the limits of keys and teams themselves, bounded per level', () => {
  const owned = ownedLimits(snapshot(2));
  assert.deepEqual(
    owned.map((o) => `${o.level}:${o.id}:${o.limit.kind}`),
    ['virtual_key:k0:budget', 'virtual_key:k0:tokens', 'virtual_key:k0:requests', 'virtual_key:k1:budget', 'virtual_key:k1:tokens', 'virtual_key:k1:requests', 'team:team:budget'],
  );
  const many = ownedLimits(snapshot(MAX_SPENDERS + 5));
  assert.equal(new Set(many.filter((o) => o.level === 'virtual_key').map((o) => o.id)).size, MAX_SPENDERS);
});

test('headroom reads the counter store, and its last seen usage when the store does not answer', async () => {
  const snap = snapshot(1);
  const counters = new MemoryCounterStore();
  const now = Date.now();
  const limits = ownedLimits(snap);
  const budget = limits.find((o) => o.level === 'virtual_key' && o.limit.kind === 'budget')!.limit;
  await counters.record([{ limit: budget, amount: 2.5 }], now);
  const rows = await headroom(snap, counters, now);
  assert.equal(rows.find((r) => r.level === 'virtual_key' && r.limit.kind === 'budget')?.used, 2.5);
  // The team's budget is a counter of its own, untouched.
  assert.equal(rows.find((r) => r.level === 'team')?.used, 0);
  const down: CounterStore = {
    admit: (l, n) => counters.admit(l, n),
    record: (a, n) => counters.record(a, n),
    peek: () => Promise.reject(new Error('redis down')),
    cached: (key) => counters.cached(key),
    close: () => counters.close(),
  };
  const stale = await headroom(snap, down, now);
  assert.equal(stale.find((r) => r.level === 'virtual_key' && r.limit.kind === 'budget')?.used, 2.5);
});
