// /api/logs/breakdown and /api/logs/export over real traffic: the official OpenAI SDK through a
// gateway (SQLite logs, the default) to the mock provider, which also fails on demand (an upstream
// 500, a 401 for the gateway's key). What the overview and the logs page's export show a user.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import type { LogEntry, UsageBreakdown } from '../../proxy/src/api/answers.ts';

let mock: MockProvider;
let g: InProcessGateway;
let started = 0;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({ providers: mockProviders(mock.url) });
  started = Date.now();
  const sdk = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'none', maxRetries: 0 });
  const chat = (model: string, content: string) => sdk.chat.completions.create({ model, messages: [{ role: 'user', content }] });
  await chat('openai/gpt-4o', 'one, with "quotes", and a comma');
  await chat('openai/gpt-4o', '=cmd|calc');
  await chat('gemini/gemini-2.5-flash', 'three');
  mock.inject({ format: 'openai', status: 500, message: 'upstream broke' });
  await chat('openai/gpt-4o', 'upstream fails').catch(() => undefined);
  mock.inject({ format: 'openai', status: 401, message: 'bad key' });
  await chat('openai/gpt-4o', 'key refused').catch(() => undefined);
  await chat('openai/gpt-4o', 'six');
  await eventually(async () => assert.equal((await api<{ stats: { total_requests: number } }>('/api/logs')).stats.total_requests, 6), 3000);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${g.url}${path}`);
  const body = (await res.json()) as T;
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

const window = () => `start_time=${new Date(started - 3600_000).toISOString()}&end_time=${new Date(Date.now() + 1000).toISOString()}`;

test('the breakdown by provider tells upstream failures from the gateway key the provider refused', async () => {
  const b = await api<UsageBreakdown>(`/api/logs/breakdown?by=provider&${window()}`);
  assert.equal(b.totals.requests, 6);
  const openai = b.groups.find((x) => x.id === 'openai')!;
  assert.equal(openai.totals.requests, 5);
  assert.equal(openai.totals.upstream_errors, 1, 'the upstream 500');
  assert.equal(openai.totals.gateway_errors, 1, 'the refused provider key is the gateway configuration');
  assert.equal(openai.totals.client_errors, 0);
  assert.ok(openai.totals.total_tokens > 0);
  assert.ok(openai.totals.p50_latency !== null);
  assert.equal(b.groups.find((x) => x.id === 'gemini')?.totals.requests, 1);
  assert.equal(b.series.requests.reduce((a, n) => a! + n!, 0), 6, 'the series add up to the total');
  assert.equal(b.series.requests.length, b.times.length);
});

test('by model and by virtual key; a bad dimension or limit is a 400 naming the parameter', async () => {
  const byModel = await api<UsageBreakdown>(`/api/logs/breakdown?by=model&${window()}`);
  assert.deepEqual(byModel.groups.map((x) => x.id), ['gpt-4o', 'gemini-2.5-flash']);
  const byKey = await api<UsageBreakdown>(`/api/logs/breakdown?by=virtual_key&${window()}`);
  assert.deepEqual(byKey.groups.map((x) => x.id), [''], 'no virtual keys: one group of records without one');
  for (const [q, param] of [['by=colour', 'by'], ['by=model&limit=0', 'limit'], ['by=model&nope=1', 'nope']] as const) {
    const res = await fetch(`${g.url}/api/logs/breakdown?${q}`);
    assert.equal(res.status, 400, q);
    assert.equal(((await res.json()) as { error: { param: string } }).error.param, param);
  }
});

test('the export is the current search as CSV: a header and one line per matching record, with its status code', async () => {
  const res = await fetch(`${g.url}/api/logs/export?format=csv&providers=openai`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/csv/);
  assert.match(res.headers.get('content-disposition')!, /^attachment; filename="skybridge-logs-.*\.csv"$/);
  const lines = (await res.text()).trimEnd().split('\r\n');
  assert.match(lines[0]!, /^timestamp,id,status,status_code,error_class,object,provider,model,/);
  assert.equal(lines.length, 1 + 5, 'the five openai records');
  const status = lines.slice(1).map((l) => l.split(',')[3]);
  assert.deepEqual(status.sort(), ['200', '200', '200', '500', '502']);
  assert.ok(lines.slice(1).every((l) => l.split(',')[6] === 'openai'));
});

test('the export as JSON lines pages through every match, each line one record', async () => {
  const res = await fetch(`${g.url}/api/logs/export?format=jsonl&sort_by=latency&order=asc`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/x-ndjson/);
  const entries = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as LogEntry);
  assert.equal(entries.length, 6);
  const latencies = entries.map((e) => e.latency!);
  assert.deepEqual(latencies, [...latencies].sort((a, b) => a - b), 'in the asked order');
  assert.ok(entries.every((e) => e.raw_request === undefined), 'no content in an export');
  const bad = await fetch(`${g.url}/api/logs/export?format=xlsx`);
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { param: string } }).error.param, 'format');
});
