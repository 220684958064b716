// The logs filter form: every /api/logs filter, kept in the page's hash so a filtered view is a link.
// Applied on submit (the server does the search), never per keystroke against a million rows.
import { useEffect, useState } from 'preact/hooks';
import { Button, Checkbox, Field, Select, TextInput } from '../../ui/components.tsx';
import { DEFAULT_LIMIT, FILTER_KEYS, STATUSES } from './types.ts';
import { ORDER_OPTIONS } from '../shared/paged-filters.ts';
import type { FilterData, IdName } from '../../../../proxy/src/api/answers.ts';

type Values = Record<string, string>;

const ANY = { value: '', label: 'Any' };

/** ISO → the `datetime-local` control's local `YYYY-MM-DDTHH:mm`. */
function toLocal(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function fromLocal(v: string): string {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function valuesOf(p: URLSearchParams): Values {
  const v: Values = {};
  for (const k of FILTER_KEYS) v[k] = p.get(k) ?? '';
  v.start_time = toLocal(p.get('start_time'));
  v.end_time = toLocal(p.get('end_time'));
  v.sort_by = p.get('sort_by') ?? 'timestamp';
  v.order = p.get('order') ?? 'desc';
  v.limit = p.get('limit') ?? String(DEFAULT_LIMIT);
  return v;
}

/** Options from the store's known values, keeping a value the link set even if it is not among them. */
function options(values: readonly (string | IdName)[] | undefined, current: string) {
  const opts = (values ?? []).map((v) => (typeof v === 'string' ? { value: v, label: v } : { value: v.id, label: v.name && v.name !== v.id ? `${v.name} (${v.id})` : v.id }));
  if (current && !opts.some((o) => o.value === current)) opts.push({ value: current, label: current });
  return [ANY, ...opts];
}

export function LogFilters(props: { params: URLSearchParams; filterData: FilterData | undefined; onApply: (params: Record<string, string>) => void }) {
  const [v, setV] = useState<Values>(() => valuesOf(props.params));
  const key = props.params.toString();
  useEffect(() => setV(valuesOf(props.params)), [key]);
  const set = (k: string) => (value: string) => setV((old) => ({ ...old, [k]: value }));
  const fd = props.filterData;
  const more = ['objects', 'selected_key_ids', 'virtual_key_ids', 'routing_rule_ids', 'routing_engine_used', 'min_latency', 'max_latency', 'min_tokens', 'max_tokens', 'min_cost', 'max_cost', 'missing_cost_only'].some((k) => v[k]);

  const submit = (e: Event) => {
    e.preventDefault();
    const out: Record<string, string> = { ...v, start_time: fromLocal(v.start_time ?? ''), end_time: fromLocal(v.end_time ?? '') };
    if (out.sort_by === 'timestamp') delete out.sort_by;
    if (out.order === 'desc') delete out.order;
    if (out.limit === String(DEFAULT_LIMIT)) delete out.limit;
    props.onApply(out);
  };
  const clear = () => props.onApply({});
  // Called as functions, not used as components: a component defined in render would remount (and
  // lose focus) on every keystroke.
  const choice = (label: string, k: string, values: readonly (string | IdName)[] | undefined) => (
    <Field label={label}>
      <Select value={v[k] ?? ''} onChange={set(k)} options={options(values, v[k] ?? '')} />
    </Field>
  );
  const numberFilter = (label: string, k: string) => (
    <Field label={label}>
      <TextInput type="number" value={v[k] ?? ''} onInput={set(k)} />
    </Field>
  );

  return (
    <form class="card log-filters" role="search" aria-label="Search logs" onSubmit={submit}>
      <div class="form-grid">
        <Field label="Search content">
          <TextInput type="search" name="content_search" value={v.content_search ?? ''} onInput={set('content_search')} placeholder="Text in the request or answer" />
        </Field>
        {choice('Status', 'status', STATUSES)}
        {choice('Provider', 'providers', fd?.providers)}
        {choice('Model', 'models', fd?.models)}
        <Field label="From">
          <TextInput type="datetime-local" value={v.start_time ?? ''} onInput={set('start_time')} />
        </Field>
        <Field label="To">
          <TextInput type="datetime-local" value={v.end_time ?? ''} onInput={set('end_time')} />
        </Field>
      </div>
      <details open={more}>
        <summary>More filters and sorting</summary>
        <div class="form-grid">
          {choice('Request type', 'objects', fd?.objects)}
          {choice('Virtual key', 'virtual_key_ids', fd?.virtual_keys)}
          {choice('Provider key', 'selected_key_ids', fd?.selected_keys)}
          {choice('Routing rule', 'routing_rule_ids', fd?.routing_rules)}
          {choice('Routing engine', 'routing_engine_used', fd?.routing_engines ?? ['routing-rule', 'governance', 'loadbalancing'])}
          {numberFilter('Min latency (ms)', 'min_latency')}
          {numberFilter('Max latency (ms)', 'max_latency')}
          {numberFilter('Min tokens', 'min_tokens')}
          {numberFilter('Max tokens', 'max_tokens')}
          {numberFilter('Min cost (USD)', 'min_cost')}
          {numberFilter('Max cost (USD)', 'max_cost')}
          <Field label="Sort by">
            <Select
              value={v.sort_by ?? 'timestamp'}
              onChange={set('sort_by')}
              options={[
                { value: 'timestamp', label: 'Time' },
                { value: 'latency', label: 'Latency' },
                { value: 'tokens', label: 'Tokens' },
                { value: 'cost', label: 'Cost' },
              ]}
            />
          </Field>
          <Field label="Order">
            <Select value={v.order ?? 'desc'} onChange={set('order')} options={ORDER_OPTIONS} />
          </Field>
          <Field label="Rows per page">
            <Select value={v.limit ?? String(DEFAULT_LIMIT)} onChange={set('limit')} options={['25', '50', '100', '250']} />
          </Field>
        </div>
        <Checkbox label="Only requests without a cost (unknown price)" checked={v.missing_cost_only === 'true'} onChange={(c) => set('missing_cost_only')(c ? 'true' : '')} />
      </details>
      <div class="row">
        <Button type="submit" kind="primary">
          Search
        </Button>
        <Button onClick={clear}>Clear filters</Button>
      </div>
    </form>
  );
}
