// The dashboard's event hub: what each emitter sends, and that nothing is built while nobody listens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventHub } from '../../proxy/src/logs/live-events.ts';
import type { LogRecord } from '../../proxy/src/logs/record.ts';

function collect(hub: EventHub): { events: Record<string, unknown>[]; off: () => void } {
  const events: Record<string, unknown>[] = [];
  const off = hub.subscribe((frame) => events.push(JSON.parse(frame) as Record<string, unknown>));
  return { events, off };
}

const record = (over: Partial<LogRecord> = {}): LogRecord => ({ id: 'req-1', timestamp: 1_700_000_000_000, object: 'chat.completion', status: 'success', provider: 'openai', model: 'gpt-4o', ...over });

test('with nobody listening nothing is built: a record is not even read', () => {
  const hub = new EventHub();
  const untouchable = new Proxy({} as LogRecord, {
    get() {
      throw new Error('read while nobody listens');
    },
  });
  hub.logsWritten([untouchable]);
  assert.equal(hub.budgetWatch([{ limit: { key: 'budget:b', id: 'b', kind: 'budget', max: 1, duration: '1d' }, amount: 1 }], { cached: () => 1 }), undefined);
  hub.webhookGaveUp({ webhook: 'w', delivery: 'd', event: 'e', attempts: 3, error: 'x' });
});

test('a stored record is a log event shaped like an /api/logs item; a 5xx also a request_error, a 4xx not', () => {
  const hub = new EventHub();
  const { events, off } = collect(hub);
  hub.logsWritten([
    record({ prompt_tokens: 3, completion_tokens: 4, input_content: 'secret prompt' }),
    record({ id: 'req-2', status: 'error', error_details: { status: 502, message: 'upstream failed', type: 'api_error' } }),
    record({ id: 'req-3', status: 'error', error_details: { status: 401, message: 'no key', type: 'authentication_error' } }),
  ]);
  off();
  const logs = events.filter((e) => e.type === 'log').map((e) => e.data as Record<string, unknown>);
  assert.deepEqual(
    logs.map((l) => l.id),
    ['req-1', 'req-2', 'req-3'],
  );
  assert.deepEqual(logs[0].token_usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  assert.equal(logs[0].timestamp, new Date(1_700_000_000_000).toISOString());
  assert.equal(logs[0].raw_request, undefined, 'content stays out of list items');
  const errors = events.filter((e) => e.kind === 'request_error');
  assert.equal(errors.length, 1);
  assert.deepEqual((errors[0].data as Record<string, unknown>).log_id, 'req-2');
  assert.equal((errors[0].data as Record<string, unknown>).status, 502);
  assert.match(String(errors[0].message), /req-2 failed \(502\): upstream failed/);
});

test('a child record (an agent request’s turn) is neither a log event nor a notification: its parent’s record is', () => {
  const hub = new EventHub();
  const { events, off } = collect(hub);
  const failed = { status: 'error' as const, error_details: { status: 502, message: 'upstream failed', type: 'api_error' } };
  hub.logsWritten([record({ id: 'turn-1', parent_request_id: 'agent', ...failed }), record({ id: 'agent', ...failed })]);
  off();
  assert.deepEqual(
    events.filter((e) => e.type === 'log').map((e) => (e.data as { id: string }).id),
    ['agent'],
  );
  assert.deepEqual(
    events.filter((e) => e.kind === 'request_error').map((e) => (e.data as { log_id: string }).log_id),
    ['agent'],
    'one notification per failed client request',
  );
});

test('budget_threshold: once per threshold the increment crosses, judged on the increment itself', () => {
  const hub = new EventHub();
  const { events } = collect(hub);
  const limit = { key: 'budget:team', id: 'team', kind: 'budget', max: 10, duration: '1d' };
  const usage = new Map<string, number>();
  const counters = { cached: (k: string) => usage.get(k) };
  const charge = (after: number, amount: number) => {
    const done = hub.budgetWatch([{ limit, amount }, { limit: { ...limit, key: 'tokens:x', kind: 'tokens' }, amount: 500 }], counters);
    usage.set(limit.key, after);
    done?.();
  };
  charge(5, 5); // 0 → 5: nothing
  charge(7.9, 2.9); // below 80 %
  charge(8.5, 0.6); // crosses 80 %
  charge(9, 0.5); // between
  charge(12, 3); // crosses 100 %
  charge(15, 3); // already over
  assert.deepEqual(
    events.map((e) => [(e.data as { threshold_percent: number }).threshold_percent, (e.data as { usage: number }).usage]),
    [
      [80, 8.5],
      [100, 12],
    ],
  );
  events.length = 0;
  usage.set(limit.key, 0);
  charge(11, 11); // 0 → 11: both at once
  assert.deepEqual(
    events.map((e) => (e.data as { threshold_percent: number }).threshold_percent),
    [80, 100],
  );
  assert.equal(events[0].kind, 'budget_threshold');
  assert.equal(hub.budgetWatch([{ limit: { ...limit, kind: 'requests' }, amount: 1 }], counters), undefined, 'no budget in the charge');
});

test('mcp_client_state on a change only; webhook_failure with the delivery; a throwing listener does not starve the others', () => {
  const hub = new EventHub();
  hub.subscribe(() => {
    throw new Error('broken socket');
  });
  const { events } = collect(hub);
  hub.mcpClientChanged({ id: 'fs', name: 'fs', state: 'connected', lastError: undefined });
  hub.mcpClientChanged({ id: 'fs', name: 'fs', state: 'connected', lastError: undefined }); // a re-listing
  hub.mcpClientChanged({ id: 'fs', name: 'fs', state: 'error', lastError: 'connection refused' });
  assert.deepEqual(
    events.map((e) => e.data),
    [
      { client_id: 'fs', name: 'fs', state: 'connected' },
      { client_id: 'fs', name: 'fs', state: 'error', previous_state: 'connected', error: 'connection refused' },
    ],
  );
  assert.match(String(events[1].message), /MCP client 'fs' is error: connection refused/);
  events.length = 0;
  hub.webhookGaveUp({ webhook: 'orders', delivery: 'msg_1', event: 'async_job.completed', attempts: 5, error: 'receiver answered 500' });
  assert.equal(events[0].kind, 'webhook_failure');
  assert.deepEqual(events[0].data, { webhook: 'orders', delivery_id: 'msg_1', event: 'async_job.completed', attempts: 5, error: 'receiver answered 500' });
  assert.ok(!Number.isNaN(Date.parse(String(events[0].at))));
});
