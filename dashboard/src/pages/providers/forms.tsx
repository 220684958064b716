// Provider and provider-key forms. A key's value is write-only here: the field starts empty on edit
// and an empty field keeps the stored value (the API never hands the page the real one).
import { useState } from 'preact/hooks';
import { Checkbox, Field, Select } from '../../ui/components.tsx';
import { EditForm, TextField, toNumber } from '../../ui/form.tsx';
import { post, put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { fieldError, splitList } from '../budgets/model.ts';
import { NETWORK_FIELDS } from './model.ts';
import type { ProviderKeyView as ProviderKey, ProviderView as Provider } from '../../../../proxy/src/api/answers.ts';

export function ProviderForm(props: { provider: Provider | undefined; onSaved: () => void; onCancel: () => void }) {
  const p = props.provider;
  const net = p?.network_config ?? {};
  const [name, setName] = useState(p?.name ?? '');
  const [base, setBase] = useState(p?.custom_provider_config?.base_provider_type ?? '');
  const [baseUrl, setBaseUrl] = useState(net.base_url ?? '');
  const [network, setNetwork] = useState<Record<string, string>>(Object.fromEntries(NETWORK_FIELDS.map(([f]) => [f, net[f] === undefined ? '' : String(net[f])])));
  const [keyName, setKeyName] = useState('');
  const [keyValue, setKeyValue] = useState('');

  const save = useAction(() => {
    // The whole network_config is sent back: masked header values are restored by the gateway.
    const network_config: Record<string, unknown> = { ...net };
    if (baseUrl.trim()) network_config.base_url = baseUrl.trim();
    else delete network_config.base_url;
    for (const [f] of NETWORK_FIELDS) {
      if (network[f].trim()) network_config[f] = toNumber(network[f]);
      else delete network_config[f];
    }
    const body: Record<string, unknown> = { network_config: Object.keys(network_config).length ? network_config : p ? null : undefined };
    if (base) body.custom_provider_config = { ...(p?.custom_provider_config ?? {}), base_provider_type: base };
    if (p) return put(`/api/providers/${encodeURIComponent(p.name)}`, body);
    return post('/api/providers', { provider: name, ...body, ...(keyName || keyValue ? { keys: [{ name: keyName, value: keyValue, weight: 1 }] } : {}) });
  });
  const err = (f: string) => fieldError(save.error, f);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={p ? 'Save' : 'Create provider'} onCancel={props.onCancel}>
      <div class="form-grid">
        {!p && (
          <TextField label="Provider name" hint="openai, anthropic, gemini, … or a custom name" value={name} onInput={setName} name="provider" error={err('provider')} />
        )}
        <Field label="Custom provider base type" hint="only for a custom provider" error={err('custom_provider_config')}>
          <Select value={base} onChange={setBase} options={[{ value: '', label: 'Built-in provider' }, 'openai', 'anthropic', 'gemini']} name="base_provider_type" />
        </Field>
        <TextField label="Base URL" hint="empty: the provider's default" type="url" value={baseUrl} onInput={setBaseUrl} name="base_url" error={err('network_config.base_url')} />
        {NETWORK_FIELDS.map(([f, label]) => (
          <TextField label={label} value={network[f]} onInput={(v) => setNetwork({ ...network, [f]: v })} name={f} error={err(`network_config.${f}`)} />
        ))}
      </div>
      {!p && (
        <fieldset class="gov-fieldset">
          <legend>First key</legend>
          <div class="form-grid">
            <TextField label="Key name" value={keyName} onInput={setKeyName} name="key_name" error={err('keys[0].name')} />
            <TextField label="Key value" hint="the API key, or env.VAR" type="password" value={keyValue} onInput={setKeyValue} name="key_value" error={err('keys[0].value')} />
          </div>
        </fieldset>
      )}
    </EditForm>
  );
}

export function KeyForm(props: { provider: string; keyRecord: ProviderKey | undefined; onSaved: () => void; onCancel: () => void }) {
  const k = props.keyRecord;
  const [name, setName] = useState(k?.name ?? '');
  const [value, setValue] = useState('');
  const [weight, setWeight] = useState(k?.weight === undefined ? '1' : String(k.weight));
  const [models, setModels] = useState((k?.models ?? []).join(', '));
  const [batch, setBatch] = useState(k?.use_for_batch_api ?? false);
  const save = useAction(() => {
    const body: Record<string, unknown> = { name, weight: toNumber(weight), models: splitList(models), use_for_batch_api: batch };
    if (value || !k) body.value = value;
    const base = `/api/providers/${encodeURIComponent(props.provider)}/keys`;
    return k ? put(`${base}/${encodeURIComponent(k.id)}`, body) : post(base, body);
  });
  const err = (f: string) => fieldError(save.error, f);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={k ? 'Save key' : 'Add key'} onCancel={props.onCancel}>
      <div class="form-grid">
        <TextField label="Key name" value={name} onInput={setName} name="name" error={err('name')} />
        <TextField label="Key value" hint={k ? `now ${k.value}; empty keeps it` : 'the API key, or env.VAR'} type="password" value={value} onInput={setValue} name="value" error={err('value')} />
        <TextField label="Weight" hint="0 disables the key" value={weight} onInput={setWeight} name="weight" error={err('weight')} />
        <TextField label="Models" hint="comma-separated; empty: all" value={models} onInput={setModels} name="models" error={err('models')} />
      </div>
      <Checkbox label="Use for batch API" checked={batch} onChange={setBatch} name="use_for_batch_api" />
    </EditForm>
  );
}
