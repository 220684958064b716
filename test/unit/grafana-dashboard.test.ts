// deploy/grafana/skybridge.json queries only metrics (and labels) the proxy and the operator really
// register: the names come from the gateway's and the operator's own metric registries, built here
// as main.ts builds them (the proxy's with the cache and async-job metrics added), not from a list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { cacheMetrics } from '../../proxy/src/cache/metrics.ts';
import { asyncMetrics } from '../../proxy/src/async/metrics.ts';
import type { JobStore } from '../../proxy/src/async/job-store.ts';
import { OperatorMetrics } from '../../operator/src/metrics.ts';

const DASHBOARD = new URL('../../deploy/grafana/skybridge.json', import.meta.url);

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
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[]; templating: { list: { name: string }[] } };

/** Labels Prometheus adds to every scraped series (the Prometheus operator's target labels). */
const TARGET_LABELS = ['namespace', 'pod', 'container', 'job', 'instance', 'service', 'endpoint'];

interface Known {
  labels: Set<string>;
}

/** Every series name the two registries expose (histograms as _bucket, _sum and _count) with its labels. */
function registered(): Map<string, Known> {
  const proxy = new Metrics();
  cacheMetrics(proxy);
  // Collected only at scrape time: the store is never read here.
  asyncMetrics(proxy, {} as JobStore, () => 0);
  const operator = new OperatorMetrics();
  const out = new Map<string, Known>();
  for (const m of [...proxy.registry.getMetricsAsArray(), ...operator.registry.getMetricsAsArray()]) {
    const { name, type, labelNames } = m as unknown as { name: string; type: string; labelNames: string[] };
    const labels = new Set(labelNames ?? []);
    if (type === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) out.set(name + suffix, { labels: new Set([...labels, ...(suffix === '_bucket' ? ['le'] : [])]) });
    } else if (type === 'summary') {
      for (const suffix of ['', '_sum', '_count']) out.set(name + suffix, { labels: new Set([...labels, 'quantile']) });
    } else {
      out.set(name, { labels });
    }
  }
  return out;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);

/** The metric names and label names a PromQL expression uses (Grafana variables and ranges left out). */
function references(expr: string): { metrics: string[]; labels: string[] } {
  const labels: string[] = [];
  let rest = expr.replace(/\{([^}]*)\}/g, (_, matchers: string) => {
    for (const m of matchers.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.push(m[1]);
    return ' ';
  });
  rest = rest.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_, list: string) => {
    labels.push(...list.split(',').map((l) => l.trim()).filter(Boolean));
    return ' ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ').replace(/"[^"]*"/g, ' ');
  const metrics: string[] = [];
  for (const m of rest.matchAll(/(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] || KEYWORDS.has(m[1])) continue;
    metrics.push(m[1]);
  }
  return { metrics, labels };
}

/** What is wrong with one expression, against the registered series. */
function problems(expr: string, known: Map<string, Known>): string[] {
  const { metrics, labels } = references(expr);
  const out: string[] = [];
  if (metrics.length === 0) out.push('references no metric');
  for (const m of metrics) if (!known.has(m)) out.push(`metric ${m} is not registered by the proxy or the operator`);
  const allowed = new Set([...TARGET_LABELS, ...metrics.flatMap((m) => [...(known.get(m)?.labels ?? [])])]);
  for (const l of labels) if (!allowed.has(l)) out.push(`label ${l} is not a label of ${metrics.join(', ')}`);
  return out;
}

const targets = () => dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

test('every metric and label the dashboard queries is one the proxy or the operator registers', () => {
  const known = registered();
  assert.ok(known.has('skybridge_requests_total') && known.has('skybridge_operator_reconciles_total') && known.has('process_resident_memory_bytes'), 'both registries were read');
  const found = targets().flatMap((t) => problems(t.expr, known).map((p) => `${t.panel}: ${p} in ${t.expr}`));
  assert.deepEqual(found, []);
  // It covers both workloads.
  const used = new Set(targets().flatMap((t) => references(t.expr).metrics));
  assert.ok([...used].some((m) => m.startsWith('skybridge_operator_')));
  assert.ok(used.has('skybridge_requests_total') && used.has('skybridge_request_duration_seconds_bucket'));
});

test('the checker catches a misspelt metric, a double-prefixed process metric and a label the metric lacks', () => {
  const known = registered();
  assert.deepEqual(problems('sum(rate(skybridge_request_total{namespace="$namespace"}[$__rate_interval]))', known), ['metric skybridge_request_total is not registered by the proxy or the operator']);
  assert.deepEqual(problems('skybridge_process_process_cpu_seconds_total', known), ['metric skybridge_process_process_cpu_seconds_total is not registered by the proxy or the operator']);
  assert.deepEqual(problems('sum by (tenant) (rate(skybridge_requests_total[5m]))', known), ['label tenant is not a label of skybridge_requests_total']);
  assert.deepEqual(problems('histogram_quantile(0.95, sum by (le, provider) (rate(skybridge_upstream_duration_seconds_bucket{container="proxy"}[5m]))) / 1e-9', known), []);
});

test('a well-formed dashboard: unique panel ids, every query on the chosen data source and namespace', () => {
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual(dashboard.templating.list.map((v) => v.name), ['datasource', 'namespace']);
  for (const p of dashboard.panels.filter((x) => x.type !== 'row')) {
    assert.equal(p.datasource?.uid, '${datasource}', p.title);
    assert.ok(p.gridPos.x + p.gridPos.w <= 24, p.title);
    assert.ok((p.targets ?? []).length > 0, p.title);
    for (const t of p.targets ?? []) assert.match(t.expr, /namespace="\$namespace"/, `${p.title}: ${t.expr}`);
  }
});
