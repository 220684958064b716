// Counting the replicas that serve a custom resource (operator/src/served.ts) from their Lease
// reports, the Ready/Connected conditions built from the count, the scrubbing of reported errors,
// and the bounded pool the status writes go through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServedTracker } from '../../operator/src/served.ts';
import { desiredConditions, servedProblem, statusFields } from '../../operator/src/status.ts';
import { forEachLimited } from '../../operator/src/pool.ts';
import { encodeServedReport, parseServedReport, scrubError } from '../../proxy/src/state/served-contract.ts';
import { GivenUpDeliveries } from '../../proxy/src/webhooks/given-up.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function lease(name: string, revision: string | undefined, renewAt: number, opts: { sections?: string[]; mcp?: Record<string, { state: 'connected' | 'error'; tools: number; error?: string }> } = {}) {
  return {
    metadata: { name, annotations: { 'skybridge.dev/served': encodeServedReport({ ...(revision ? { revision, secretChecksum: 's' } : {}), sections: opts.sections ?? ['providers', 'mcp_clients'], mcp: opts.mcp ?? {} }) } },
    spec: { holderIdentity: name, leaseDurationSeconds: 10, renewTime: new Date(renewAt).toISOString() },
  };
}

test('a replica serves a CR once it serves a revision rendered at or after the CR\'s generation', () => {
  const t = new ServedTracker();
  t.rendered('r1/s');
  t.includes('uid-a', 1);
  assert.equal(t.observe('add', lease('p1', 'r1', T0), T0), true);
  assert.equal(t.observe('add', lease('p2', 'r1', T0), T0), true);
  const live = () => t.live(T0 + 1000);
  assert.deepEqual(t.count('uid-a', 1, 'providers', live()), { live: 2, implementing: 2, serving: 2, waiting: [] });
  // Generation 2 goes into r2: nobody serves it until a replica reports r2.
  t.rendered('r2/s');
  t.includes('uid-a', 2);
  assert.equal(t.count('uid-a', 2, 'providers', live()).serving, 0);
  assert.equal(t.observe('update', lease('p1', 'r2', T0 + 500), T0 + 500), true);
  assert.deepEqual(t.count('uid-a', 2, 'providers', live()), { live: 2, implementing: 2, serving: 1, waiting: ['p2'] });
  // Another CR changes (r3): p1 on r2 still serves uid-a's generation 2, which r3 also holds.
  t.rendered('r3/s');
  t.includes('uid-b', 1);
  t.includes('uid-a', 2);
  assert.equal(t.count('uid-a', 2, 'providers', live()).serving, 1);
  assert.equal(t.count('uid-b', 1, 'providers', live()).serving, 0);
  // A generation the last render did not see is served by no one.
  assert.equal(t.count('uid-a', 3, 'providers', live()).serving, 0);
  // A section the replica does not act on.
  assert.deepEqual(t.count('uid-a', 2, 'webhooks', live()), { live: 2, implementing: 0, serving: 0, waiting: [] });
});

test('a revision rendered again later (a change reverted) counts as the later one', () => {
  const t = new ServedTracker();
  t.rendered('A/s');
  t.includes('u', 1);
  t.rendered('B/s');
  t.includes('u', 2);
  t.rendered('A/s'); // generation 3 restores the first content
  t.includes('u', 3);
  t.observe('add', lease('p1', 'A', T0), T0);
  t.observe('add', lease('p2', 'B', T0), T0);
  assert.deepEqual(t.count('u', 3, 'providers', t.live(T0)), { live: 2, implementing: 2, serving: 1, waiting: ['p2'] });
});

test('leases: renewals keep a replica live, a stale one expires, a deleted one goes at once; a new leader starts over', () => {
  const t = new ServedTracker();
  t.rendered('r/s');
  t.includes('u', 1);
  // Seen for the first time long after its last renewal: already expired.
  t.observe('add', lease('dead', 'r', T0 - 60_000), T0);
  t.observe('add', lease('p1', 'r', T0), T0);
  assert.equal(t.liveKey(T0), 'p1');
  // A renewal (same report) is not news, but moves the expiry from when it was seen here.
  assert.equal(t.observe('update', lease('p1', 'r', T0 + 5000), T0 + 5000), false);
  assert.equal(t.nextExpiry(T0 + 5000), T0 + 15_000);
  assert.equal(t.live(T0 + 14_000).length, 1);
  assert.equal(t.live(T0 + 15_001).length, 0);
  // Renewed after expiring: live again, and that is news.
  assert.equal(t.observe('update', lease('p1', 'r', T0 + 20_000), T0 + 20_000), true);
  assert.equal(t.observe('delete', lease('p1', 'r', T0 + 20_000), T0 + 20_001), true);
  assert.equal(t.live(T0 + 20_002).length, 0);
  // An annotation that is not a report is ignored.
  assert.equal(t.observe('add', { metadata: { name: 'x', annotations: { 'skybridge.dev/served': 'not json' } } }, T0), false);
  t.observe('add', lease('p2', 'r', T0 + 30_000), T0 + 30_000);
  t.reset();
  assert.equal(t.count('u', 1, 'providers', t.live(T0 + 30_000)).serving, 0, 'revisions from before this leader are unknown');
});

test('while the reports cannot be watched (an API-server outage) a replica live then is not taken for gone; once watched again it has a lease duration to renew', () => {
  const t = new ServedTracker();
  t.rendered('r/s');
  t.includes('u', 1);
  t.observe('add', lease('p1', 'r', T0), T0); // lease 10 s: live until T0 + 10 s
  t.observe('add', lease('old', 'r', T0 - 9000), T0); // live until T0 + 1 s
  t.blind(T0 + 2000); // the watch breaks; 'old' had expired by then
  // 45 s later, still blind: p1's renewals cannot be seen, so it still counts (and no expiry is armed).
  assert.equal(t.liveKey(T0 + 45_000), 'p1');
  assert.equal(t.nextExpiry(T0 + 45_000), undefined);
  assert.equal(t.count('u', 1, 'providers', t.live(T0 + 45_000)).serving, 1);
  // Watching again at T0 + 50 s: p1 has until T0 + 60 s to show a renewal.
  t.seeing(T0 + 50_000);
  assert.equal(t.liveKey(T0 + 59_000), 'p1');
  assert.equal(t.nextExpiry(T0 + 59_000), T0 + 60_000);
  assert.equal(t.live(T0 + 60_001).length, 0, 'a replica that does not renew after the outage drops out');
  // A renewal seen after the return keeps it live as usual.
  t.blind(T0 + 70_000);
  t.seeing(T0 + 71_000);
  t.observe('update', lease('p1', 'r', T0 + 71_500), T0 + 71_500);
  assert.equal(t.live(T0 + 80_000).length, 1);
});

test('Ready from the count: Served only when every live replica serves it; NoReplicas, NotImplemented, Propagating otherwise', () => {
  const valid = { accepted: true, reason: 'Valid', message: 'ok' };
  const ok = { ok: true as const, revision: 'r' };
  const ready = (count: { live: number; implementing: number; serving: number; waiting: string[]; problem?: string }, kind = 'Provider') => desiredConditions(valid, ok, { kind, count }).find((c) => c.type === 'Ready');
  assert.deepEqual(ready({ live: 2, implementing: 2, serving: 2, waiting: [] }), { type: 'Ready', status: 'True', reason: 'Served', message: 'Served by all 2 proxy replicas.' });
  assert.equal(ready({ live: 2, implementing: 2, serving: 1, waiting: ['p2'] })?.message, 'Rendered; served by 1 of 2 proxy replicas; waiting for p2.');
  assert.equal(ready({ live: 0, implementing: 0, serving: 0, waiting: [] })?.reason, 'NoReplicas');
  assert.match(ready({ live: 2, implementing: 0, serving: 0, waiting: [] }, 'Webhook')?.message ?? '', /none of the 2 proxy replicas acts on Webhook resources \(webhook deliveries need a logs store/);
  assert.equal(ready({ live: 2, implementing: 1, serving: 1, waiting: [] }, 'CachePolicy')?.reason, 'PartiallyImplemented');
  // A replica that rejected the newest rendering says why: it will not catch up by itself.
  assert.deepEqual(ready({ live: 2, implementing: 2, serving: 1, waiting: ['p2'], problem: 'p2: rendered configuration revision ' + 'ab'.repeat(32) + ' rejected: providers.x: bad' }), {
    type: 'Ready',
    status: 'False',
    reason: 'RejectedByProxy',
    message: `Rendered; served by 1 of 2 proxy replicas; p2: rendered configuration revision ${'ab'.repeat(32)} rejected: providers.x: bad`,
  });
  // Without a served view (--ready-when rendered): Ready once written, as before.
  assert.equal(desiredConditions(valid, ok).find((c) => c.type === 'Ready')?.reason, 'Rendered');
  // The actionable reason: Accepted's when refused, Connected's when an MCP client fails.
  const refused = desiredConditions({ accepted: false, reason: 'SecretNotFound', message: 'x' }, ok, { kind: 'Provider', count: { live: 1, implementing: 1, serving: 0, waiting: [] } });
  assert.equal(statusFields(refused).reason, 'SecretNotFound');
  // Both replicas still serve the generation before the refused one: the refused one is served by none.
  const view = { kind: 'Provider', count: { live: 2, implementing: 2, serving: 2, waiting: [] } };
  assert.deepEqual(statusFields(refused, view), { reason: 'SecretNotFound', message: 'x', served: '0/2', servedReplicas: 0, replicas: 2 });
  const mcpView = { kind: 'MCPClient', count: { live: 2, implementing: 2, serving: 2, waiting: [] }, mcp: [{ identity: 'p1', client: { state: 'connected', tools: 3 } }, { identity: 'p2', client: { state: 'error', tools: 0, error: 'spawn ENOENT' } }] };
  const mcp = desiredConditions(valid, ok, mcpView);
  assert.deepEqual(mcp.find((c) => c.type === 'Connected'), { type: 'Connected', status: 'False', reason: 'ConnectionFailed', message: 'p2: spawn ENOENT' });
  assert.deepEqual(statusFields(mcp, mcpView), { reason: 'ConnectionFailed', message: 'p2: spawn ENOENT', served: '2/2', servedReplicas: 2, replicas: 2, toolCount: 3, lastError: 'spawn ENOENT' });
});

test('reported errors lose anything that looks like a credential', () => {
  assert.equal(scrubError('401 from https://user:hunter2@mcp.example.com/x?api_key=abc123&q=1'), '401 from https://[redacted]@mcp.example.com/x?api_key=[redacted]&q=1');
  assert.equal(scrubError('Authorization: Bearer eyJhbGciOi.payload.sig failed'), 'Authorization: Bearer [redacted] failed');
  assert.equal(scrubError('token sk-live-0123456789abcdef in stderr'), 'token [redacted] in stderr');
  assert.equal(scrubError('key sk-proj-abcdefghijklmnop rejected'), 'key [redacted] rejected');
  assert.equal(scrubError('spawn /usr/bin/mcp-server ENOENT'), 'spawn /usr/bin/mcp-server ENOENT');
  assert.equal(scrubError('opaque AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEf end'), 'opaque [redacted] end');
  assert.ok(scrubError('x'.repeat(1000)).length <= 300);
  // The report round-trips; a malformed one is rejected rather than half-read.
  const text = encodeServedReport({ revision: 'r', secretChecksum: 's', sections: ['providers'], mcp: { a: { state: 'error', tools: 0, error: 'Bearer abc' } } });
  assert.deepEqual(parseServedReport(text), { revision: 'r', secretChecksum: 's', sections: ['providers'], mcp: { a: { state: 'error', tools: 0, error: 'Bearer [redacted]' } } });
  assert.equal(parseServedReport('[1]'), undefined);
});

test('status writes run with at most N in flight, and the first error is thrown after the running ones settle', async () => {
  let inFlight = 0;
  let peak = 0;
  const done: number[] = [];
  await forEachLimited([...Array(50).keys()], 8, async (i) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await sleep(2);
    inFlight--;
    done.push(i);
  });
  assert.equal(peak, 8);
  assert.equal(done.length, 50);
  let started = 0;
  await assert.rejects(
    forEachLimited([...Array(50).keys()], 4, async (i) => {
      started++;
      await sleep(1);
      if (i === 2) throw new Error('boom');
    }),
    /boom/,
  );
  assert.ok(started < 50, 'no new calls after the failure');
});

test('a flat status field no longer set is removed by the merge patch (lastError once the client connects)', async () => {
  const { nextStatus, statusChanged, statusPatch } = await import('../../operator/src/status.ts');
  const now = new Date('2026-01-01T00:00:00Z');
  const failing = nextStatus(undefined, [{ type: 'Connected', status: 'False', reason: 'ConnectionFailed', message: 'p1: x' }], 1, now, { reason: 'ConnectionFailed', lastError: 'x', served: '1/1' });
  const fixed = nextStatus(failing, [{ type: 'Connected', status: 'True', reason: 'Connected', message: 'ok' }], 1, now, { reason: 'Served', toolCount: 3, served: '1/1' });
  assert.equal(statusChanged(failing, fixed), true);
  const patch = statusPatch(failing, fixed);
  assert.equal(patch.lastError, null);
  assert.equal(patch.toolCount, 3);
  // Same fields again: nothing to write.
  assert.equal(statusChanged(fixed, nextStatus(fixed, [{ type: 'Connected', status: 'True', reason: 'Connected', message: 'ok' }], 1, now, { reason: 'Served', toolCount: 3, served: '1/1' })), false);
});

test('served problems a user must act on become Events: a replica refusing, no replica acting, an MCP server unreachable', () => {
  const valid = { accepted: true, reason: 'Valid', message: 'ok' };
  const ok = { ok: true, revision: 'r' } as const;
  const view = (count: { live: number; implementing: number; serving: number; waiting: string[]; problem?: string }, kind = 'Webhook', mcp?: { identity: string; client: { state: string; tools: number; error?: string } }[]) => ({ kind, count, ...(mcp && { mcp }) });
  const rejected = servedProblem(desiredConditions(valid, ok, view({ live: 2, implementing: 2, serving: 1, waiting: ['p2'], problem: 'p2: config rejected' })));
  assert.deepEqual(rejected && [rejected.reason, rejected.action], ['RejectedByProxy', 'Serve']);
  assert.match(rejected!.note, /p2: config rejected/);
  assert.equal(servedProblem(desiredConditions(valid, ok, view({ live: 2, implementing: 0, serving: 0, waiting: [] })))?.reason, 'NotImplemented');
  const down = servedProblem(desiredConditions(valid, ok, view({ live: 1, implementing: 1, serving: 1, waiting: [] }, 'MCPClient', [{ identity: 'p1', client: { state: 'error', tools: 0, error: 'ECONNREFUSED' } }])));
  assert.deepEqual(down && [down.reason, down.action, down.note], ['ConnectionFailed', 'Connect', 'p1: ECONNREFUSED']);
  // Served, or on its way: nothing to say.
  assert.equal(servedProblem(desiredConditions(valid, ok, view({ live: 2, implementing: 2, serving: 2, waiting: [] }))), undefined);
  assert.equal(servedProblem(desiredConditions(valid, ok, view({ live: 2, implementing: 2, serving: 1, waiting: ['p2'] }))), undefined);
});

test('a Webhook whose deliveries a replica gave up on is not Delivering: a Warning to act on, cleared when the report clears', () => {
  const valid = { accepted: true, reason: 'Valid', message: 'ok' };
  const ok = { ok: true, revision: 'r' } as const;
  const count = { live: 2, implementing: 2, serving: 2, waiting: [] };
  const failing = { kind: 'Webhook', count, givenUp: [{ identity: 'p2', webhook: { exhausted: 3, error: 'receiver answered 503' } }] };
  const conditions = desiredConditions(valid, ok, failing);
  assert.deepEqual(conditions.find((c) => c.type === 'Ready')?.reason, 'Served');
  const delivering = conditions.find((c) => c.type === 'Delivering');
  assert.equal(delivering?.status, 'False');
  assert.equal(delivering?.reason, 'DeliveriesExhausted');
  assert.match(delivering?.message ?? '', /^p2: deliveries were given up after their last retry within the last 10 minutes; last error: receiver answered 503$/);
  assert.equal(statusFields(conditions, failing).reason, 'DeliveriesExhausted');
  const problem = servedProblem(conditions);
  assert.deepEqual(problem && [problem.reason, problem.action], ['DeliveriesExhausted', 'Deliver']);
  // Nothing given up lately: Delivering, and no Event.
  const fine = desiredConditions(valid, ok, { kind: 'Webhook', count, givenUp: [] });
  assert.equal(fine.find((c) => c.type === 'Delivering')?.status, 'True');
  assert.equal(servedProblem(fine), undefined);
});

test('the served report carries given-up webhooks (errors scrubbed) and a reader drops malformed entries', () => {
  const text = encodeServedReport({ revision: 'r', secretChecksum: 's', sections: ['webhooks'], mcp: {}, webhooks: { billing: { exhausted: 2, error: 'POST https://u:pw@hooks.example.com/x failed' } } });
  assert.deepEqual(parseServedReport(text)?.webhooks, { billing: { exhausted: 2, error: 'POST https://[redacted]@hooks.example.com/x failed' } });
  const raw = JSON.parse(text) as Record<string, unknown>;
  raw.webhooks = { a: { exhausted: -1 }, b: 'x', c: { exhausted: 1.5 }, d: { exhausted: 1 } };
  assert.deepEqual(parseServedReport(JSON.stringify(raw))?.webhooks, { d: { exhausted: 1 } });
  // None given up: the report has no webhooks member at all (older operators read it as before).
  assert.equal('webhooks' in JSON.parse(encodeServedReport({ sections: [], mcp: {}, webhooks: {} })), false);
});

test('given-up deliveries count within the window and drop out after it', () => {
  const given = new GivenUpDeliveries(60_000);
  given.record('billing', 'receiver answered 500', 1_000);
  given.record('billing', 'receiver answered 503', 30_000);
  given.record('audit', undefined, 40_000);
  assert.deepEqual(given.recent(50_000), { billing: { exhausted: 2, error: 'receiver answered 503' }, audit: { exhausted: 1 } });
  assert.deepEqual(given.recent(70_000), { billing: { exhausted: 1, error: 'receiver answered 503' }, audit: { exhausted: 1 } });
  assert.deepEqual(given.recent(101_000), {});
});

test('a Provider whose InferencePool gives a replica no server says so: InferencePool=False with that replica\'s reason, a Warning, the REASON column', () => {
  const valid = { accepted: true, reason: 'Valid', message: 'ok' };
  const ok = { ok: true, revision: 'r' } as const;
  const count = { live: 2, implementing: 2, serving: 2, waiting: [] };
  const t = new ServedTracker();
  const report = (name: string, pools?: Record<string, { problem: string }>) => ({
    metadata: { name, annotations: { 'skybridge.dev/served': encodeServedReport({ revision: 'r', secretChecksum: 's', sections: ['providers'], mcp: {}, ...(pools && { pools }) }) } },
    spec: { holderIdentity: name, leaseDurationSeconds: 10, renewTime: new Date(T0).toISOString() },
  });
  t.observe('add', report('p1'), T0);
  t.observe('add', report('p2', { vllm: { problem: 'InferencePool models/llama does not exist' } }), T0);
  const pools = t.pools('vllm', t.live(T0 + 1));
  assert.deepEqual(pools, [{ identity: 'p2', pool: { problem: 'InferencePool models/llama does not exist' } }]);
  const conditions = desiredConditions(valid, ok, { kind: 'Provider', count, pools });
  const pool = conditions.find((c) => c.type === 'InferencePool');
  assert.deepEqual(pool && [pool.status, pool.reason, pool.message], ['False', 'InferencePoolUnavailable', 'p2: InferencePool models/llama does not exist']);
  assert.equal(statusFields(conditions, { kind: 'Provider', count, pools }).reason, 'InferencePoolUnavailable');
  assert.deepEqual(servedProblem(conditions)?.reason, 'InferencePoolUnavailable');
  // Every replica finds servers: True, no Event; a Provider without a pool gets no such condition.
  const fine = desiredConditions(valid, ok, { kind: 'Provider', count, pools: t.pools('openai', t.live(T0 + 1)) });
  assert.equal(fine.find((c) => c.type === 'InferencePool')?.status, 'True');
  assert.equal(servedProblem(fine), undefined);
  assert.equal(desiredConditions(valid, ok, { kind: 'Provider', count }).some((c) => c.type === 'InferencePool'), false);
  // The report drops malformed entries, and names none when there is nothing to say.
  const raw = JSON.parse(encodeServedReport({ sections: [], mcp: {}, pools: { a: { problem: 'x Bearer sk-secret-token-value' } } })) as Record<string, unknown>;
  assert.deepEqual(parseServedReport(JSON.stringify(raw))?.pools, { a: { problem: 'x Bearer [redacted]' } });
  raw.pools = { a: { problem: 3 }, b: 'x', c: { problem: 'ok' } };
  assert.deepEqual(parseServedReport(JSON.stringify(raw))?.pools, { c: { problem: 'ok' } });
  assert.equal('pools' in JSON.parse(encodeServedReport({ sections: [], mcp: {}, pools: {} })), false);
});
