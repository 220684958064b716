// Does a live log (from the socket) belong in the list the filters describe? Content search cannot be
// decided here (live items carry no content), so the caller asks the server again for those.
import type { LogEntry } from '../../../../proxy/src/api/answers.ts';

const list = (p: URLSearchParams, k: string): string[] | undefined => {
  const v = p.get(k);
  if (!v) return undefined;
  const items = v.split(',').map((s) => s.trim()).filter(Boolean);
  return items.length ? items : undefined;
};
const num = (p: URLSearchParams, k: string): number | undefined => {
  const v = p.get(k);
  if (v === null || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

function inList(values: string[] | undefined, v: string | undefined): boolean {
  return !values || (v !== undefined && values.includes(v));
}

function inRange(lo: number | undefined, hi: number | undefined, v: number | undefined): boolean {
  if (lo === undefined && hi === undefined) return true;
  if (v === undefined) return false;
  return (lo === undefined || v >= lo) && (hi === undefined || v <= hi);
}

export function matchesFilters(e: LogEntry, p: URLSearchParams): boolean {
  const t = Date.parse(e.timestamp);
  const start = p.get('start_time') ? Date.parse(p.get('start_time')!) : undefined;
  const end = p.get('end_time') ? Date.parse(p.get('end_time')!) : undefined;
  if (start !== undefined && !(t >= start)) return false;
  if (end !== undefined && !(t <= end)) return false;
  if (p.get('missing_cost_only') === 'true' && e.cost !== undefined && e.cost !== null) return false;
  const engines = list(p, 'routing_engine_used');
  const rules = list(p, 'routing_rule_ids');
  return (
    inList(list(p, 'providers'), e.provider) &&
    inList(list(p, 'models'), e.model) &&
    inList(list(p, 'status'), e.status) &&
    inList(list(p, 'objects'), e.object) &&
    inList(list(p, 'selected_key_ids'), e.selected_key_id) &&
    inList(list(p, 'virtual_key_ids'), e.virtual_key_id) &&
    (!rules || (e.routing_rule_ids ?? []).some((r) => rules.includes(r))) &&
    (!engines || (e.routing_engines_used ?? []).some((r) => engines.includes(r))) &&
    inRange(num(p, 'min_latency'), num(p, 'max_latency'), e.latency) &&
    inRange(num(p, 'min_tokens'), num(p, 'max_tokens'), e.token_usage?.total_tokens) &&
    inRange(num(p, 'min_cost'), num(p, 'max_cost'), e.cost)
  );
}
