// Create / edit a virtual key: name, description, active flag, team or customer, provider configs
// (provider, allowed models, keys, weight) and inline budget and rate limit. The gateway validates;
// its message is shown, and under the field it names.
import { useState } from 'preact/hooks';
import { Button, Checkbox, Field, Select, TextArea, TextInput } from '../../ui/components.tsx';
import { EditForm, TextField } from '../../ui/form.tsx';
import { post, put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { LimitsFields, limitsBody, limitsDraft, type LimitsDraft } from '../budgets/limits.tsx';
import { fieldError, splitList } from '../budgets/model.ts';
import type { CustomerView as Customer, ProviderConfigView as ProviderConfig, TeamView as Team, VirtualKeyView as VirtualKey } from '../../../../proxy/src/api/answers.ts';

export interface ProviderOption {
  name: string;
  keys: Array<{ id: string; name: string }>;
}

interface ConfigDraft {
  /** What the answer had, kept so that limits attached to it survive an edit. */
  base: ProviderConfig | undefined;
  provider: string;
  models: string;
  keys: string;
  weight: string;
  limits: LimitsDraft;
}

const toDraft = (pc: ProviderConfig): ConfigDraft => ({
  base: pc,
  provider: pc.provider,
  models: (pc.allowed_models ?? []).join(', '),
  keys: (pc.key_ids ?? []).join(', '),
  weight: pc.weight === null || pc.weight === undefined ? '' : String(pc.weight),
  limits: limitsDraft(pc),
});

const newConfig = (provider: string): ConfigDraft => ({ base: undefined, provider, models: '*', keys: '*', weight: '1', limits: limitsDraft(undefined) });

function configBody(d: ConfigDraft): Record<string, unknown> {
  const keep: Record<string, unknown> = {};
  if (d.base?.budget_id) keep.budget_id = d.base.budget_id;
  if (d.base?.rate_limit_id) keep.rate_limit_id = d.base.rate_limit_id;
  const w = d.weight.trim();
  return {
    ...keep,
    provider: d.provider,
    allowed_models: splitList(d.models),
    key_ids: splitList(d.keys),
    ...(w !== '' && { weight: Number.isFinite(Number(w)) ? Number(w) : w }),
    ...limitsBody(d.limits, d.base),
  };
}

export function VirtualKeyForm(props: {
  vk: VirtualKey | undefined;
  teams: Team[];
  customers: Customer[];
  providers: ProviderOption[];
  onSaved: (vk: VirtualKey, created: boolean) => void;
  onCancel: () => void;
}) {
  const vk = props.vk;
  const [name, setName] = useState(vk?.name ?? '');
  const [description, setDescription] = useState(vk?.description ?? '');
  const [active, setActive] = useState(vk?.is_active ?? true);
  const [owner, setOwner] = useState(vk?.team_id ? `team:${vk.team_id}` : vk?.customer_id ? `customer:${vk.customer_id}` : '');
  const [configs, setConfigs] = useState<ConfigDraft[]>(
    vk?.provider_configs?.map(toDraft) ?? (props.providers[0] ? [newConfig(props.providers[0].name)] : []),
  );
  const [limits, setLimits] = useState(limitsDraft(vk));

  const save = useAction(async () => {
    const body: Record<string, unknown> = {
      name,
      description: description || (vk?.description ? null : undefined),
      is_active: active,
      team_id: owner.startsWith('team:') ? owner.slice(5) : vk?.team_id ? null : undefined,
      customer_id: owner.startsWith('customer:') ? owner.slice(9) : vk?.customer_id ? null : undefined,
      provider_configs: configs.map(configBody),
      ...limitsBody(limits, vk),
    };
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
    if (vk) return { vk: (await put<{ virtual_key: VirtualKey }>(`/api/governance/virtual-keys/${encodeURIComponent(vk.id)}`, body)).virtual_key, created: false };
    return { vk: (await post<{ virtual_key: VirtualKey }>('/api/governance/virtual-keys', body)).virtual_key, created: true };
  });

  const setConfig = (i: number, patch: Partial<ConfigDraft>) => setConfigs(configs.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  const err = (p: string) => fieldError(save.error, p);
  const ownerOptions = [
    { value: '', label: 'None' },
    ...props.teams.map((t) => ({ value: `team:${t.id}`, label: `Team: ${t.name}` })),
    ...props.customers.map((c) => ({ value: `customer:${c.id}`, label: `Customer: ${c.name}` })),
  ];
  const providerOptions = props.providers.map((p) => p.name);

  return (
    <EditForm save={save} onSaved={(r) => props.onSaved(r.vk, r.created)} submitLabel={vk ? 'Save' : 'Create virtual key'} onCancel={props.onCancel}>
      <div class="form-grid">
        <TextField label="Name" value={name} onInput={setName} name="name" error={err('name')} />
        <Field label="Team or customer" error={err('team_id') ?? err('customer_id')}>
          <Select value={owner} onChange={setOwner} options={ownerOptions} name="owner" />
        </Field>
      </div>
      <Field label="Description" error={err('description')}>
        <TextArea value={description} onInput={setDescription} name="description" rows={2} invalid={!!err('description')} />
      </Field>
      <Checkbox label="Active" checked={active} onChange={setActive} name="is_active" />
      <fieldset class="gov-fieldset">
        <legend>Provider configs</legend>
        {configs.length === 0 && <p class="muted">No provider: the key can call nothing.</p>}
        {configs.map((c, i) => {
          const keyNames = props.providers.find((p) => p.name === c.provider)?.keys.map((k) => k.name) ?? [];
          const at = `provider_configs[${i}]`;
          return (
            <div class="form-grid vk-config" key={i}>
              <Field label={`Provider ${i + 1}`} error={fieldError(save.error, `${at}.provider`)}>
                <Select value={c.provider} onChange={(v) => setConfig(i, { provider: v })} options={providerOptions.includes(c.provider) ? providerOptions : [c.provider, ...providerOptions]} />
              </Field>
              <Field label={`Allowed models ${i + 1}`} hint="comma-separated; * for all" error={fieldError(save.error, `${at}.allowed_models`)}>
                <TextInput value={c.models} onInput={(v) => setConfig(i, { models: v })} />
              </Field>
              <Field label={`Provider keys ${i + 1}`} hint={`* for any${keyNames.length ? `; ${keyNames.join(', ')}` : ''}`} error={fieldError(save.error, `${at}.key_ids`)}>
                <TextInput value={c.keys} onInput={(v) => setConfig(i, { keys: v })} />
              </Field>
              <Field label={`Weight ${i + 1}`} hint="empty: not in weighted selection" error={fieldError(save.error, `${at}.weight`)}>
                <TextInput value={c.weight} onInput={(v) => setConfig(i, { weight: v })} invalid={!!fieldError(save.error, `${at}.weight`)} />
              </Field>
              <Button kind="danger" onClick={() => setConfigs(configs.filter((_, j) => j !== i))} label={`Remove provider config ${i + 1}`}>
                Remove
              </Button>
              <details class="vk-config-limits" open={c.limits.budgetOn || c.limits.rateOn}>
                <summary>Budget and rate limit of provider {i + 1}</summary>
                <LimitsFields draft={c.limits} onChange={(l) => setConfig(i, { limits: l })} error={save.error} prefix={at} legend={`Limits of provider ${i + 1}`} labelSuffix={`of provider ${i + 1}`} />
              </details>
            </div>
          );
        })}
        <Button onClick={() => setConfigs([...configs, newConfig(providerOptions[0] ?? '')])} disabled={providerOptions.length === 0}>
          Add provider
        </Button>
      </fieldset>
      <LimitsFields draft={limits} onChange={setLimits} error={save.error} />
    </EditForm>
  );
}
