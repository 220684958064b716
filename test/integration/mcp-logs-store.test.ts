// MCP tool call logs in the request-log store: two gateways sharing one PostgreSQL each see the
// other's tool calls in /api/mcp-logs (filters, stats, filter data, sort by cost from tool_pricing);
// with SQLite the calls outlive a restart; without a store each gateway keeps its own in memory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;

let mock: MockProvider;
let pgServer: RunningPostgres;
const gateways: InProcessGateway[] = [];

before(async () => {
  mock = await startMockProvider();
  pgServer = await startPostgres();
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await mock.close();
  await pgServer.stop();
});

const mcp = {
  client_configs: [
    { name: 'local', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] }, tools_to_execute: ['*'], tool_pricing: { echo: 0.25, add: 1.5 }, allow_without_virtual_key: true },
  ],
};

interface LogsAnswer {
  logs: { id: string; tool_name: string; server_label: string; arguments: Record<string, unknown>; status: string; cost: number; latency: number; result?: { text: string }; error_details?: unknown; source: string }[];
  pagination: { total_count: number };
  stats: { total_executions: number; success_rate: number; total_cost: number };
  has_logs: boolean;
}

async function start(config: Record<string, unknown>, appDir?: string): Promise<InProcessGateway> {
  const g = await startGateway({ providers: mockProviders(mock.url), mcp, ...config }, appDir ? { appDir } : {});
  gateways.push(g);
  await eventually(async () => {
    const res = await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients');
    assert.equal(res.body[0]?.state, 'connected');
  }, 30_000);
  return g;
}

async function call(g: InProcessGateway, tool: string, args: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${g.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'c1', type: 'function', function: { name: `local-${tool}`, arguments: JSON.stringify(args) } }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { content: string }).content;
}

const logs = async (g: InProcessGateway, query = '') => {
  const res = await apiClient(g)<LogsAnswer>('GET', `/api/mcp-logs${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
};

test('two replicas sharing PostgreSQL: each replica lists, filters and counts the calls made on the other', async () => {
  const logs_store = { enabled: true, type: 'postgres', config: { host: pgServer.host, port: String(pgServer.port), user: pgServer.user, password: '', db_name: pgServer.database, ssl_mode: 'disable' } };
  const [a, b] = await Promise.all([start({ logs_store }), start({ logs_store })]);
  assert.equal(await call(a, 'echo', { query: 'made-on-replica-a' }), 'echo: made-on-replica-a');
  assert.equal(await call(a, 'add', { a: 2, b: 3 }), '5');
  await call(a, 'fail', {});
  assert.equal(await call(b, 'echo', { query: 'made-on-replica-b' }), 'echo: made-on-replica-b');
  // Written after the answer: visible on the other replica shortly after.
  let all: LogsAnswer | undefined;
  await eventually(async () => {
    all = await logs(b);
    assert.equal(all.pagination.total_count, 4);
  }, 10_000);
  assert.equal(all!.has_logs, true);
  assert.deepEqual(all!.logs.map((l) => l.tool_name).sort(), ['add', 'echo', 'echo', 'fail']);
  // The same answer from either replica.
  assert.deepEqual((await logs(a)).logs.map((l) => l.id).sort(), all!.logs.map((l) => l.id).sort());
  // Filters run in the store.
  const fromA = await logs(b, '?content_search=replica-a');
  assert.equal(fromA.pagination.total_count, 1);
  assert.deepEqual(fromA.logs[0].arguments, { query: 'made-on-replica-a' });
  assert.equal(fromA.logs[0].result?.text, 'echo: made-on-replica-a');
  assert.equal(fromA.logs[0].source, 'execute');
  const failed = await logs(a, '?status=error');
  assert.deepEqual(failed.logs.map((l) => l.tool_name), ['fail']);
  assert.ok(failed.logs[0].error_details);
  assert.equal((await logs(a, '?tool_names=echo,add&server_labels=local')).pagination.total_count, 3);
  // Literal search: % is not a wildcard.
  assert.equal((await logs(a, '?content_search=%25')).pagination.total_count, 0);
  // Cost from tool_pricing (successful calls only); sort by cost; stats over every replica's calls.
  const byCost = await logs(b, '?sort_by=cost&order=desc&limit=2');
  assert.deepEqual(byCost.logs.map((l) => [l.tool_name, l.cost]), [['add', 1.5], ['echo', 0.25]]);
  assert.equal(byCost.pagination.total_count, 4);
  const stats = (await apiClient(a)<LogsAnswer['stats']>('GET', '/api/mcp-logs/stats')).body;
  assert.equal(stats.total_executions, 4);
  assert.equal(stats.success_rate, 75);
  assert.equal(stats.total_cost, 2);
  const fd = (await apiClient(b)<{ tool_names: string[]; server_labels: string[] }>('GET', '/api/mcp-logs/filterdata')).body;
  assert.deepEqual(fd.tool_names, ['add', 'echo', 'fail']);
  assert.deepEqual(fd.server_labels, ['local']);
  // They are rows of the shared database, under a recorded migration.
  const db = new pg.Client({ connectionString: pgServer.url });
  await db.connect();
  try {
    assert.equal(Number((await db.query('SELECT count(*) AS n FROM mcp_tool_logs')).rows[0].n), 4);
    assert.equal((await db.query('SELECT 1 FROM logs_schema_migrations WHERE version = 5')).rowCount, 1);
  } finally {
    await db.end();
  }
});

test('with SQLite the calls outlive a restart; without a store each gateway keeps its own in memory', async () => {
  const first = await start({ client: { enable_logging: true } });
  await call(first, 'echo', { query: 'before-restart' });
  await eventually(async () => assert.equal((await logs(first)).pagination.total_count, 1), 10_000);
  await first.stop();
  const again = await start({ client: { enable_logging: true } }, first.appDir);
  const kept = await logs(again, '?content_search=before-restart');
  assert.equal(kept.pagination.total_count, 1);
  assert.equal(kept.logs[0].cost, 0.25);

  // Request logs are on by default; off, there is no store and the calls stay in memory.
  const memory = await start({ client: { enable_logging: false } });
  assert.equal((await logs(memory)).has_logs, false);
  await call(memory, 'add', { a: 1, b: 1 });
  const own = await logs(memory);
  assert.equal(own.pagination.total_count, 1);
  assert.equal(own.logs[0].tool_name, 'add');
});
