// The chart's Grafana dashboard (charts/skybridge/dashboards/skybridge.json) queries only metrics
// (and labels) the proxy and the operator really register (test/helpers/promql.ts reads their
// registries), and only labels every Prometheus scrape sets: it must work on the Prometheus
// operator's ServiceMonitors and on a plain scrape job alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { problems, references, registered } from '../helpers/promql.ts';

const DASHBOARD = new URL('../../charts/skybridge/dashboards/skybridge.json', import.meta.url);

interface Target {
  expr: string;
  refId: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  definition?: string;
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[]; templating: { list: Variable[] } };

const targets = () => dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

test('every metric and label the dashboard queries is one the proxy or the operator registers', () => {
  const known = registered();
  assert.ok(known.has('skybridge_requests_total') && known.has('skybridge_operator_reconciles_total') && known.has('process_resident_memory_bytes'), 'both registries were read');
  const found = targets().flatMap((t) => problems(t.expr, known).map((p) => `${t.panel}: ${p} in ${t.expr}`));
  // The variables' queries too.
  for (const v of dashboard.templating.list) if (v.definition) found.push(...problems(v.definition.replace(/^label_values\((.*), *\w+\)$/, '$1'), known).map((p) => `variable ${v.name}: ${p}`));
  assert.deepEqual(found, []);
  // It covers both workloads and what an operator charts first.
  const used = new Set(targets().flatMap((t) => references(t.expr).metrics));
  assert.ok([...used].some((m) => m.startsWith('skybridge_operator_')));
  for (const m of [
    'skybridge_requests_total', 'skybridge_request_duration_seconds_bucket', 'skybridge_cost_usd_total', 'skybridge_budget_remaining_ratio',
    'skybridge_rate_limit_remaining_ratio', 'skybridge_mcp_tool_calls_total', 'skybridge_mcp_tool_call_duration_seconds_bucket',
    'skybridge_requests_in_flight', 'skybridge_build_info',
  ]) assert.ok(used.has(m), `the dashboard charts ${m}`);
});

test('the checker catches a misspelt metric, a double-prefixed process metric and a label the metric lacks', () => {
  const known = registered();
  assert.deepEqual(problems('sum(rate(skybridge_request_total{job=~"$job"}[$__rate_interval]))', known), ['metric skybridge_request_total is not registered by the proxy or the operator']);
  assert.deepEqual(problems('skybridge_process_process_cpu_seconds_total', known), ['metric skybridge_process_process_cpu_seconds_total is not registered by the proxy or the operator']);
  assert.deepEqual(problems('sum by (tenant) (rate(skybridge_requests_total[5m]))', known), ['label tenant is not a label of skybridge_requests_total']);
  assert.deepEqual(problems('histogram_quantile(0.95, sum by (le, provider) (rate(skybridge_upstream_duration_seconds_bucket{instance=~"$instance"}[5m]))) / 1e-9', known), []);
});

test('a well-formed dashboard for any scrape: a data source variable, series chosen by job and instance only', () => {
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  const vars = dashboard.templating.list;
  assert.deepEqual(vars.map((v) => v.name), ['datasource', 'job', 'instance', 'operator_instance']);
  assert.equal(vars[0].type, 'datasource');
  for (const p of dashboard.panels.filter((x) => x.type !== 'row')) {
    assert.equal(p.datasource?.uid, '${datasource}', p.title);
    assert.ok(p.gridPos.x + p.gridPos.w <= 24, p.title);
    assert.ok((p.targets ?? []).length > 0, p.title);
    for (const t of p.targets ?? []) {
      // A plain scrape job sets job and instance, never namespace, pod or container.
      const { labels, metrics } = references(t.expr);
      for (const l of ['namespace', 'pod', 'container', 'service', 'endpoint']) assert.ok(!labels.includes(l), `${p.title}: ${l} is set by the Prometheus operator only: ${t.expr}`);
      const operator = metrics.some((m) => m.startsWith('skybridge_operator_')) || /\$operator_instance/.test(t.expr);
      assert.match(t.expr, operator ? /instance=~"\$operator_instance"/ : /job=~"\$job", instance=~"\$instance"/, `${p.title}: ${t.expr}`);
      // A legend naming an operator-only label would be empty on a plain scrape.
      assert.doesNotMatch((t as { legendFormat?: string }).legendFormat ?? '', /\{\{\s*(namespace|pod|container)\s*\}\}/, p.title);
    }
  }
});
