// Forms of the models page: a model config (model, provider, inline limits) and a provider's
// pricing override (stored in providers.<name>.pricing_overrides, written with PUT /api/providers/<name>).
import { useState } from 'preact/hooks';
import { Field, Select } from '../../ui/components.tsx';
import { EditForm, TextField, toNumber } from '../../ui/form.tsx';
import { post, put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { LimitsFields, limitsBody, limitsDraft } from '../budgets/limits.tsx';
import { fieldError, splitList } from '../budgets/model.ts';
import type { ModelConfigView as ModelConfig, PricingOverride } from '../../../../proxy/src/api/answers.ts';

export const PRICE_FIELDS = [
  ['input_cost_per_token', 'Input $/token'],
  ['output_cost_per_token', 'Output $/token'],
  ['cache_read_input_token_cost', 'Cache read $/token'],
  ['cache_creation_input_token_cost', 'Cache write $/token'],
] as const;

export function ModelConfigForm(props: { config: ModelConfig | undefined; providers: string[]; onSaved: () => void; onCancel: () => void }) {
  const mc = props.config;
  const [model, setModel] = useState(mc?.model_name ?? '');
  const [provider, setProvider] = useState(mc?.provider ?? '');
  const [limits, setLimits] = useState(limitsDraft(mc));
  const save = useAction(() => {
    const body: Record<string, unknown> = { model_name: model, ...limitsBody(limits, mc) };
    if (provider) body.provider = provider;
    else if (mc?.provider) body.provider = null;
    return mc ? put(`/api/governance/model-configs/${encodeURIComponent(mc.id)}`, body) : post('/api/governance/model-configs', body);
  });
  const err = (p: string) => fieldError(save.error, p);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={mc ? 'Save' : 'Create model config'} onCancel={props.onCancel}>
      <div class="form-grid">
        <TextField label="Model name" value={model} onInput={setModel} name="model_name" error={err('model_name')} />
        <Field label="Provider" hint="empty: the model at any provider" error={err('provider')}>
          <Select value={provider} onChange={setProvider} options={[{ value: '', label: 'Any provider' }, ...props.providers]} name="provider" />
        </Field>
      </div>
      <LimitsFields draft={limits} onChange={setLimits} error={save.error} />
    </EditForm>
  );
}

/** `index` undefined: a new override appended to the provider's list. */
export function PricingForm(props: {
  providers: string[];
  provider: string | undefined;
  overrides: (name: string) => PricingOverride[];
  index: number | undefined;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const editing = props.provider !== undefined && props.index !== undefined ? props.overrides(props.provider)[props.index] : undefined;
  const [provider, setProvider] = useState(props.provider ?? props.providers[0] ?? '');
  const [pattern, setPattern] = useState(editing?.model_pattern ?? '');
  const [matchType, setMatchType] = useState<string>(editing?.match_type ?? 'exact');
  const [requestTypes, setRequestTypes] = useState((editing?.request_types ?? []).join(', '));
  const [prices, setPrices] = useState<Record<string, string>>(Object.fromEntries(PRICE_FIELDS.map(([f]) => [f, editing?.[f] === undefined ? '' : String(editing[f])])));
  const list = props.overrides(provider);
  const index = props.index ?? list.length;
  const save = useAction(() => {
    // Fields this form does not show (other price dimensions) are kept as they were.
    const entry: Record<string, unknown> = { ...(editing ?? {}), model_pattern: pattern, match_type: matchType };
    const types = splitList(requestTypes);
    if (types.length) entry.request_types = types;
    else delete entry.request_types;
    for (const [f] of PRICE_FIELDS) {
      if (prices[f].trim() === '') delete entry[f];
      else entry[f] = toNumber(prices[f]);
    }
    const next = [...list];
    next[index] = entry as PricingOverride;
    return put(`/api/providers/${encodeURIComponent(provider)}`, { pricing_overrides: next });
  });
  const err = (f: string) => fieldError(save.error, `pricing_overrides[${index}].${f}`);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={editing ? 'Save' : 'Add pricing override'} onCancel={props.onCancel}>
      <div class="form-grid">
        <Field label="Provider">
          <Select value={provider} onChange={setProvider} options={props.providers} name="provider" disabled={props.provider !== undefined} />
        </Field>
        <TextField label="Model pattern" value={pattern} onInput={setPattern} name="model_pattern" error={err('model_pattern')} />
        <Field label="Match type" error={err('match_type')}>
          <Select value={matchType} onChange={setMatchType} options={['exact', 'wildcard', 'regex']} name="match_type" />
        </Field>
        <TextField label="Request types" hint="comma-separated; empty: all" value={requestTypes} onInput={setRequestTypes} name="request_types" error={err('request_types')} />
        {PRICE_FIELDS.map(([f, label]) => (
          <TextField label={label} value={prices[f]} onInput={(v) => setPrices({ ...prices, [f]: v })} name={f} error={err(f)} />
        ))}
      </div>
    </EditForm>
  );
}
