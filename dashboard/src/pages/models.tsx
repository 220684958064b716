// The prices in force for every model the gateway knows (models/prices.tsx), model configs
// (per-model budgets and rate limits, optionally per provider) and the providers' own pricing
// overrides (per provider, by exact name, wildcard or regex): list, create, edit, delete.
import { useState } from 'preact/hooks';
import type { PageProps } from './types.ts';
import './governance.css';
import { Button, ErrorBox, Loading, Modal, PageHeader, ReadOnlyBanner, Table } from '../ui/components.tsx';
import { del, get, put } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { LimitBars } from './budgets/limits.tsx';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { actionsColumn } from './shared/row-actions.tsx';
import { useUsage } from './budgets/use-usage.ts';
import { ModelConfigForm, PRICE_FIELDS, PricingForm } from './models/forms.tsx';
import { PricesInForceSection } from './models/prices.tsx';
import type { ModelConfigView as ModelConfig, PricingOverride, ProviderView } from '../../../proxy/src/api/answers.ts';

interface Lists {
  configs: ModelConfig[];
  providers: ProviderView[];
}

async function loadLists(): Promise<Lists> {
  const [configs, providers] = await Promise.all([get<{ model_configs: ModelConfig[] }>('/api/governance/model-configs'), get<{ providers: ProviderView[] }>('/api/providers')]);
  return { configs: configs.model_configs, providers: providers.providers };
}

interface OverrideRow {
  provider: string;
  index: number;
  o: PricingOverride;
}

/** Per-token USD as USD per million tokens, the unit price lists use. */
const perMillion = (n: unknown) => (typeof n === 'number' ? `$${(n * 1_000_000).toPrecision(4).replace(/\.?0+$/, '')}` : '—');

type Dialog =
  | { kind: 'config'; record: ModelConfig | undefined }
  | { kind: 'pricing'; provider: string | undefined; index: number | undefined }
  | { kind: 'delete-config'; record: ModelConfig }
  | { kind: 'delete-pricing'; row: OverrideRow };

export function ModelsPage({ info }: PageProps) {
  const ro = info.read_only;
  const lists = useAsync(loadLists, []);
  const usage = useUsage();
  const [dialog, setDialog] = useState<Dialog | undefined>(undefined);
  // Bumped by a change of the providers' own overrides: the prices in force are read again.
  const [pricesVersion, setPricesVersion] = useState(0);
  const data = lists.data;
  const providerNames = data?.providers.map((p) => p.name) ?? [];
  const overridesOf = (name: string) => data?.providers.find((p) => p.name === name)?.pricing_overrides ?? [];
  const rows: OverrideRow[] = data?.providers.flatMap((p) => (p.pricing_overrides ?? []).map((o, index) => ({ provider: p.name, index, o }))) ?? [];
  const close = () => setDialog(undefined);
  const done = () => (setDialog(undefined), lists.reload(), usage.reload(), setPricesVersion((v) => v + 1));

  return (
    <section class="stack">
      <PageHeader title="Models & pricing">
        <Button onClick={() => (lists.reload(), usage.reload())}>Refresh</Button>
        {!ro && (
          <>
            <Button kind="primary" onClick={() => setDialog({ kind: 'config', record: undefined })}>
              New model config
            </Button>
            <Button kind="primary" onClick={() => setDialog({ kind: 'pricing', provider: undefined, index: undefined })} disabled={!providerNames.length}>
              New pricing override
            </Button>
          </>
        )}
      </PageHeader>
      {ro && <ReadOnlyBanner reason={info.read_only_reason} kind="Provider" />}
      <ErrorBox error={lists.error} />
      {lists.loading && !data && <Loading />}
      {data && <PricesInForceSection key={pricesVersion} readOnly={ro} providers={providerNames} />}
      {data && (
        <>
          <h2>Model configs</h2>
          <Table<ModelConfig>
            caption="Model configs"
            cards
            rows={data.configs}
            rowKey={(m) => m.id}
            empty="No model configs."
            columns={[
              { label: 'Model', render: (m) => <code>{m.model_name}</code> },
              { label: 'Provider', render: (m) => m.provider ?? 'any' },
              { label: 'Usage', render: (m) => <LimitBars record={m} usage={usage.data} what={m.provider ? `${m.provider}/${m.model_name}` : m.model_name} /> },
              ...actionsColumn(ro, (m: ModelConfig) => ({ name: `model config ${m.model_name}`, onEdit: () => setDialog({ kind: 'config', record: m }), onDelete: () => setDialog({ kind: 'delete-config', record: m }) })),
            ]}
          />
          <h2>Providers' own pricing overrides</h2>
          <p class="muted">Kept in each provider's configuration (providers.&lt;name&gt;.pricing_overrides), in USD per million tokens: editable here for providers created through the dashboard; those of config.json are changed in the file, or overridden above.</p>
          <Table<OverrideRow>
            caption="Pricing overrides"
            cards
            rows={rows}
            rowKey={(r) => `${r.provider}:${r.index}`}
            empty="No pricing overrides."
            columns={[
              { label: 'Provider', key: 'provider' },
              { label: 'Model pattern', render: (r) => <code>{r.o.model_pattern}</code> },
              { label: 'Match', render: (r) => r.o.match_type },
              { label: 'Request types', render: (r) => (r.o.request_types ?? []).join(', ') || 'all' },
              // One column for the prices, so the table fits the page instead of scrolling sideways.
              { label: 'Prices ($/1M tokens)', render: (r: OverrideRow) => PRICE_FIELDS.map(([f, label]) => `${label.replace(' $/token', '')} ${perMillion(r.o[f])}`).join(' · ') },
              ...actionsColumn(ro, (r: OverrideRow) => ({ name: `pricing ${r.provider} ${r.o.model_pattern}`, onEdit: () => setDialog({ kind: 'pricing', provider: r.provider, index: r.index }), onDelete: () => setDialog({ kind: 'delete-pricing', row: r }) })),
            ]}
          />
        </>
      )}
      {dialog?.kind === 'config' && (
        <Modal title={dialog.record ? `Edit model config '${dialog.record.model_name}'` : 'New model config'} onClose={close}>
          <ModelConfigForm config={dialog.record} providers={providerNames} onSaved={done} onCancel={close} />
        </Modal>
      )}
      {dialog?.kind === 'pricing' && (
        <Modal title={dialog.index === undefined ? 'New pricing override' : 'Edit pricing override'} onClose={close}>
          <PricingForm providers={providerNames} provider={dialog.provider} overrides={overridesOf} index={dialog.index} onSaved={done} onCancel={close} />
        </Modal>
      )}
      {dialog?.kind === 'delete-config' && (
        <ConfirmDelete what={`model config '${dialog.record.model_name}'`} onConfirm={() => del(`/api/governance/model-configs/${encodeURIComponent(dialog.record.id)}`)} onClose={close} onDone={done} />
      )}
      {dialog?.kind === 'delete-pricing' && (
        <ConfirmDelete
          what={`pricing override '${dialog.row.o.model_pattern}' of ${dialog.row.provider}`}
          onConfirm={() => {
            const next = overridesOf(dialog.row.provider).filter((_, i) => i !== dialog.row.index);
            // An empty list removes the field (merge patch null).
            return put(`/api/providers/${encodeURIComponent(dialog.row.provider)}`, { pricing_overrides: next.length ? next : null });
          }}
          onClose={close}
          onDone={done}
        />
      )}
    </section>
  );
}
