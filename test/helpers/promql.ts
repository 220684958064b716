// What a PromQL expression of ours (the Grafana dashboard's panels, the chart's alert rules) reads,
// checked against the series the gateway and the operator really register: the names come from
// their own registries, built as gateway.ts builds them, not from a list.
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { cacheMetrics } from '../../proxy/src/cache/metrics.ts';
import { asyncMetrics } from '../../proxy/src/async/metrics.ts';
import { limitMetrics } from '../../proxy/src/governance/limit-metrics.ts';
import type { JobStore } from '../../proxy/src/async/job-store.ts';
import type { Snapshot } from '../../proxy/src/config/snapshot.ts';
import type { CounterStore } from '../../proxy/src/governance/counters/store.ts';
import { OperatorMetrics } from '../../operator/src/metrics.ts';

/** Labels Prometheus adds to every scraped series (a scrape job's, and the Prometheus operator's target labels). */
export const TARGET_LABELS = ['namespace', 'pod', 'container', 'job', 'instance', 'service', 'endpoint'];

export interface Known {
  labels: Set<string>;
}

/** Every series name the two registries expose (histograms as _bucket, _sum and _count) with its labels. */
export function registered(): Map<string, Known> {
  const proxy = new Metrics();
  cacheMetrics(proxy);
  // Collected only at scrape time: the store, the snapshot and the counters are never read here.
  asyncMetrics(proxy, {} as JobStore, () => 0);
  limitMetrics(proxy, () => ({}) as Snapshot, {} as CounterStore);
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

/** The metric names and label names an expression uses (Grafana variables and ranges left out). */
export function references(expr: string): { metrics: string[]; labels: string[] } {
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
export function problems(expr: string, known: Map<string, Known>): string[] {
  const { metrics, labels } = references(expr);
  const out: string[] = [];
  if (metrics.length === 0) out.push('references no metric');
  for (const m of metrics) if (!known.has(m)) out.push(`metric ${m} is not registered by the proxy or the operator`);
  const allowed = new Set([...TARGET_LABELS, ...metrics.flatMap((m) => [...(known.get(m)?.labels ?? [])])]);
  for (const l of labels) if (!allowed.has(l)) out.push(`label ${l} is not a label of ${metrics.join(', ')}`);
  return out;
}
