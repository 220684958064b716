// "Prices in force": every model the gateway knows (the built-in list, and what configured
// providers name or list) with the price it charges, where the price comes from (built-in, an
// override, or none: charged $0), searchable by provider and model. A price is changed in place: an
// override record (/api/governance/pricing-overrides) for that provider and model, which works for
// every provider, config.json's included, and is tried before the provider's own overrides.
import { useState } from 'preact/hooks';
import { Button, ErrorBox, Field, Loading, Modal, Select, Table, TextInput } from '../../ui/components.tsx';
import { EditForm, TextField, toNumber } from '../../ui/form.tsx';
import { del, get, post, put } from '../../lib/api.ts';
import { useAction, useAsync } from '../../lib/hooks.ts';
import { ConfirmDelete } from '../shared/confirm-delete.tsx';
import { fieldError, splitList } from '../budgets/model.ts';
import type { PriceInForce, PricesInForce, PricingOverrideRecord } from '../../../../proxy/src/api/answers.ts';

/** The token prices an override sets, entered per million tokens (as price lists give them) and stored per token. */
const TOKEN_FIELDS = [
  ['input_cost_per_token', 'Input $/1M tokens'],
  ['output_cost_per_token', 'Output $/1M tokens'],
  ['cache_read_input_token_cost', 'Cache read $/1M tokens'],
  ['cache_creation_input_token_cost', 'Cache write $/1M tokens'],
] as const;

const usd = (n: number | undefined): string => (n === undefined ? '—' : `$${Number(n.toPrecision(6))}`);

const SOURCE_LABEL: Record<PriceInForce['source'], string> = { builtin: 'built-in', override: 'override', none: 'none: charged $0' };
const SOURCE_BADGE: Record<PriceInForce['source'], string> = { builtin: 'badge-muted', override: 'badge-ok', none: 'badge-warn' };

function otherPrices(r: PriceInForce): string {
  const parts: string[] = [];
  if (r.per_page !== undefined) parts.push(`${usd(r.per_page)}/page`);
  if (r.per_second) parts.push(Object.entries(r.per_second).map(([tier, v]) => `${usd(v)}/s ${tier}`).join(', '));
  return parts.join(' · ') || '—';
}

function overrideOrigin(r: PriceInForce): string {
  const o = r.override;
  if (!o) return '';
  const pattern = o.match_type === 'exact' ? '' : ` (${o.match_type} ${o.model_pattern})`;
  const types = o.request_types?.length ? ` for ${o.request_types.join(', ')}` : '';
  return o.id !== undefined ? `set here${o.provider ? '' : ', every provider'}${pattern}${types}` : `providers.${r.provider}.pricing_overrides[${o.index}]${pattern}${types}`;
}

type Dialog = { kind: 'edit'; row: PriceInForce | undefined; record: PricingOverrideRecord | undefined } | { kind: 'remove'; row: PriceInForce; record: PricingOverrideRecord };

export function PricesInForceSection(props: { readOnly: boolean; providers: string[]; onChanged?: () => void }) {
  const prices = useAsync(() => get<PricesInForce>('/api/governance/pricing'), []);
  const records = useAsync(() => get<{ pricing_overrides: PricingOverrideRecord[] }>('/api/governance/pricing-overrides'), []);
  const [provider, setProvider] = useState('');
  const [search, setSearch] = useState('');
  const [source, setSource] = useState('');
  const [configuredOnly, setConfiguredOnly] = useState(false);
  const [dialog, setDialog] = useState<Dialog | undefined>(undefined);
  const reload = () => (prices.reload(), records.reload(), props.onChanged?.());
  const recordOf = (r: PriceInForce) => (r.override?.id === undefined ? undefined : records.data?.pricing_overrides.find((x) => x.id === r.override!.id));
  const all = prices.data?.models ?? [];
  const providerNames = [...new Set(all.map((r) => r.provider))];
  const needle = search.trim().toLowerCase();
  const rows = all.filter((r) => (!provider || r.provider === provider) && (!source || r.source === source) && (!configuredOnly || r.configured) && (!needle || r.model.toLowerCase().includes(needle)));
  const close = () => setDialog(undefined);

  return (
    <section class="stack" aria-labelledby="prices-in-force">
      <h2 id="prices-in-force">Prices in force</h2>
      <p class="muted">
        What each model costs the budgets and the logs: the built-in list price, an override, or none (its requests cost $0). USD per million tokens unless marked. An override set here works for every provider, those of config.json too, and wins over the provider's own
        pricing_overrides.
      </p>
      <div class="toolbar" role="search" aria-label="Filter prices">
        <Field label="Provider">
          <Select value={provider} onChange={setProvider} options={[{ value: '', label: 'All providers' }, ...providerNames]} name="price_provider" />
        </Field>
        <Field label="Model">
          <TextInput type="search" value={search} onInput={setSearch} name="price_search" placeholder="e.g. gpt-4o" />
        </Field>
        <Field label="Source">
          <Select value={source} onChange={setSource} options={[{ value: '', label: 'Any source' }, { value: 'builtin', label: 'Built-in' }, { value: 'override', label: 'Override' }, { value: 'none', label: 'None (charged $0)' }]} name="price_source" />
        </Field>
        <label class="checkbox">
          <input type="checkbox" checked={configuredOnly} onChange={(e) => setConfiguredOnly((e.currentTarget as HTMLInputElement).checked)} name="configured_only" />
          <span>Configured providers only</span>
        </label>
        {!props.readOnly && (
          <Button kind="primary" onClick={() => setDialog({ kind: 'edit', row: undefined, record: undefined })}>
            Override a price
          </Button>
        )}
      </div>
      <ErrorBox error={prices.error} />
      {prices.loading && !prices.data && <Loading />}
      {prices.data && (
        <>
          <p role="status">
            {rows.length} of {prices.data.total} models
            {prices.data.unpriced > 0 && (
              <>
                {' '}
                · <strong>{prices.data.unpriced} of configured providers have no price and are charged $0</strong>
              </>
            )}
          </p>
          <Table<PriceInForce>
            caption="Prices in force"
            cards
            dense
            rows={rows}
            rowKey={(r) => `${r.provider}/${r.model}`}
            empty="No model matches these filters."
            columns={[
              { label: 'Provider', render: (r) => (r.configured ? r.provider : <span class="muted" title="not configured on this gateway">{r.provider} (not configured)</span>) },
              { label: 'Model', render: (r) => <code>{r.model}</code> },
              {
                label: 'Source',
                render: (r) => (
                  <span>
                    <span class={`badge ${SOURCE_BADGE[r.source]}`}>{SOURCE_LABEL[r.source]}</span>
                    {r.override && <span class="muted"> {overrideOrigin(r)}</span>}
                  </span>
                ),
              },
              { label: 'Input', numeric: true, render: (r) => usd(r.input_per_million) },
              { label: 'Output', numeric: true, render: (r) => usd(r.output_per_million) },
              { label: 'Cache read', numeric: true, render: (r) => usd(r.cache_read_per_million) },
              { label: 'Cache write', numeric: true, render: (r) => usd(r.cache_write_per_million) },
              { label: 'Per page / second', render: otherPrices },
              ...(props.readOnly
                ? []
                : [
                    {
                      label: 'Actions',
                      render: (r: PriceInForce) => {
                        const record = recordOf(r);
                        return r.configured ? (
                          <div class="row nowrap">
                            <Button onClick={() => setDialog({ kind: 'edit', row: r, record: record?.provider === r.provider && record.model_pattern === r.model ? record : undefined })} label={`Set price of ${r.provider}/${r.model}`}>
                              Set price
                            </Button>
                            {record && (
                              <Button kind="danger" onClick={() => setDialog({ kind: 'remove', row: r, record })} label={`Remove override of ${r.provider}/${r.model}`}>
                                Remove override
                              </Button>
                            )}
                          </div>
                        ) : (
                          <span class="muted">configure the provider to price it</span>
                        );
                      },
                    },
                  ]),
            ]}
          />
        </>
      )}
      {dialog?.kind === 'edit' && (
        <Modal title={dialog.row ? `Price of ${dialog.row.provider}/${dialog.row.model}` : 'Override a price'} onClose={close}>
          <OverrideForm providers={props.providers} row={dialog.row} record={dialog.record} onSaved={() => (close(), reload())} onCancel={close} />
        </Modal>
      )}
      {dialog?.kind === 'remove' && (
        <ConfirmDelete
          what={`the price override of ${dialog.row.provider}/${dialog.row.model}`}
          title={`Remove the price override of ${dialog.row.provider}/${dialog.row.model}?`}
          confirmLabel="Remove override"
          onConfirm={() => del(`/api/governance/pricing-overrides/${encodeURIComponent(dialog.record.id)}`)}
          onClose={close}
          onDone={() => (close(), reload())}
        >
          The model goes back to the price it would have without this override (built-in, the provider's own override, or none).
        </ConfirmDelete>
      )}
    </section>
  );
}

/** Per-token USD as the text of a per-million field (no float noise). */
const millionText = (perToken: number | undefined): string => (perToken === undefined ? '' : String(Number((perToken * 1_000_000).toPrecision(12))));

/** The text of a per-million field as the per-token number stored; not a number: the text, so the gateway names the field. */
const perToken = (text: string): number | string => {
  const n = toNumber(text);
  return typeof n === 'number' ? Number((n / 1_000_000).toPrecision(12)) : n;
};

function OverrideForm(props: { providers: string[]; row: PriceInForce | undefined; record: PricingOverrideRecord | undefined; onSaved: () => void; onCancel: () => void }) {
  const rec = props.record;
  const row = props.row;
  const [provider, setProvider] = useState(rec?.provider ?? row?.provider ?? props.providers[0] ?? '');
  const [pattern, setPattern] = useState(rec?.model_pattern ?? row?.model ?? '');
  const [matchType, setMatchType] = useState<string>(rec?.match_type ?? 'exact');
  const [requestTypes, setRequestTypes] = useState((rec?.request_types ?? []).join(', '));
  // A new override starts from the price in force, so changing one number keeps the others.
  const start = (f: (typeof TOKEN_FIELDS)[number][0]): string => {
    if (rec) return millionText(rec[f]);
    const shown = { input_cost_per_token: row?.input_per_million, output_cost_per_token: row?.output_per_million, cache_read_input_token_cost: row?.cache_read_per_million, cache_creation_input_token_cost: row?.cache_write_per_million }[f];
    return shown === undefined ? '' : String(shown);
  };
  const [prices, setPrices] = useState<Record<string, string>>(Object.fromEntries(TOKEN_FIELDS.map(([f]) => [f, start(f)])));
  const [perPage, setPerPage] = useState(rec?.ocr_cost_per_page === undefined ? (rec ? '' : row?.per_page === undefined ? '' : String(row.per_page)) : String(rec.ocr_cost_per_page));
  const save = useAction(() => {
    const body: Record<string, unknown> = { model_pattern: pattern, match_type: matchType };
    if (provider) body.provider = provider;
    const types = splitList(requestTypes);
    if (types.length) body.request_types = types;
    for (const [f] of TOKEN_FIELDS) if (prices[f].trim() !== '') body[f] = perToken(prices[f]);
    if (perPage.trim() !== '') body.ocr_cost_per_page = toNumber(perPage);
    if (!rec) return post('/api/governance/pricing-overrides', body);
    // A PUT merges: fields emptied in the form are removed (null).
    for (const f of [...TOKEN_FIELDS.map(([f]) => f), 'ocr_cost_per_page', 'request_types', 'provider'] as const) if (body[f] === undefined && rec[f] !== undefined) body[f] = null;
    return put(`/api/governance/pricing-overrides/${encodeURIComponent(rec.id)}`, body);
  });
  const err = (f: string) => fieldError(save.error, f);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={rec ? 'Save price' : 'Add price override'} onCancel={props.onCancel}>
      <div class="form-grid">
        <Field label="Provider" error={err('provider')}>
          <Select value={provider} onChange={setProvider} options={[{ value: '', label: 'Every provider' }, ...props.providers]} name="provider" disabled={row !== undefined} />
        </Field>
        <TextField label="Model pattern" value={pattern} onInput={setPattern} name="model_pattern" error={err('model_pattern')} disabled={row !== undefined && !rec} />
        <Field label="Match type" error={err('match_type')}>
          <Select value={matchType} onChange={setMatchType} options={['exact', 'wildcard', 'regex']} name="match_type" />
        </Field>
        <TextField label="Request types" hint="comma-separated; empty: all" value={requestTypes} onInput={setRequestTypes} name="request_types" error={err('request_types')} />
        {TOKEN_FIELDS.map(([f, label]) => (
          <TextField label={label} value={prices[f]} onInput={(v) => setPrices({ ...prices, [f]: v })} name={f} error={err(f)} />
        ))}
        <TextField label="OCR $/page" value={perPage} onInput={setPerPage} name="ocr_cost_per_page" error={err('ocr_cost_per_page')} />
      </div>
    </EditForm>
  );
}
