// Providers and their keys (values masked by the API, never shown in full), network and concurrency
// settings; add / edit / delete providers and keys when the configuration is editable.
import { useState } from 'preact/hooks';
import type { PageProps } from './types.ts';
import './governance.css';
import { Banner, Button, ErrorBox, Loading, Modal, PageHeader, ReadOnlyBanner, Table } from '../ui/components.tsx';
import { del, get } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { actionsColumn } from './shared/row-actions.tsx';
import { KeyForm, ProviderForm } from './providers/forms.tsx';
import { NETWORK_FIELDS } from './providers/model.ts';
import type { ProviderKeyView as ProviderKey, ProviderView as Provider } from '../../../proxy/src/api/answers.ts';

type Dialog =
  | { kind: 'provider'; provider: Provider | undefined }
  | { kind: 'key'; provider: string; key: ProviderKey | undefined }
  | { kind: 'delete-provider'; provider: string }
  | { kind: 'delete-key'; provider: string; key: ProviderKey };

export function ProvidersPage({ rest, info }: PageProps) {
  const ro = info.read_only;
  const list = useAsync(() => get<{ providers: Provider[] }>('/api/providers'), []);
  const [dialog, setDialog] = useState<Dialog | undefined>(undefined);
  const providers = (list.data?.providers ?? []).filter((p) => !rest[0] || p.name === rest[0]);
  const close = () => setDialog(undefined);
  const done = () => (setDialog(undefined), list.reload());

  return (
    <section class="stack">
      <PageHeader title="Providers">
        <Button onClick={list.reload}>Refresh</Button>
        {!ro && (
          <Button kind="primary" onClick={() => setDialog({ kind: 'provider', provider: undefined })}>
            New provider
          </Button>
        )}
      </PageHeader>
      {ro && <ReadOnlyBanner reason={info.read_only_reason} kind="Provider" />}
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {rest[0] && <a href="#/providers">All providers</a>}
      {list.data && providers.length === 0 && <Banner kind="info">{rest[0] ? `Provider '${rest[0]}' not found.` : 'No providers configured.'}</Banner>}
      {providers.map((p) => (
        <ProviderCard key={p.name} p={p} ro={ro} setDialog={setDialog} />
      ))}
      {dialog?.kind === 'provider' && (
        <Modal title={dialog.provider ? `Edit provider '${dialog.provider.name}'` : 'New provider'} onClose={close}>
          <ProviderForm provider={dialog.provider} onSaved={done} onCancel={close} />
        </Modal>
      )}
      {dialog?.kind === 'key' && (
        <Modal title={dialog.key ? `Edit key '${dialog.key.name}' of ${dialog.provider}` : `New key for ${dialog.provider}`} onClose={close}>
          <KeyForm provider={dialog.provider} keyRecord={dialog.key} onSaved={done} onCancel={close} />
        </Modal>
      )}
      {dialog?.kind === 'delete-provider' && (
        <ConfirmDelete what={`provider '${dialog.provider}'`} onConfirm={() => del(`/api/providers/${encodeURIComponent(dialog.provider)}`)} onClose={close} onDone={done} />
      )}
      {dialog?.kind === 'delete-key' && (
        <ConfirmDelete
          what={`key '${dialog.key.name}' of ${dialog.provider}`}
          onConfirm={() => del(`/api/providers/${encodeURIComponent(dialog.provider)}/keys/${encodeURIComponent(dialog.key.id)}`)}
          onClose={close}
          onDone={done}
        />
      )}
    </section>
  );
}

function summary(value: unknown): string {
  if (value === undefined || value === null) return '—';
  if (typeof value === 'object') return Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}: ${String(v)}`).join(', ');
  return String(value);
}

function ProviderCard(props: { p: Provider; ro: boolean; setDialog: (d: Dialog) => void }) {
  const { p, ro, setDialog } = props;
  const net = p.network_config ?? {};
  const headers = Object.keys(net.extra_headers ?? {});
  return (
    <article class="card stack" aria-labelledby={`provider-${p.name}`}>
      <div class="row">
        <h2 id={`provider-${p.name}`}>
          <a href={`#/providers/${encodeURIComponent(p.name)}`}>{p.name}</a>
        </h2>
        <span class="badge badge-muted">{p.custom_provider_config ? `custom (${p.custom_provider_config.base_provider_type})` : 'built-in'}</span>
        {p.source && <span class="badge badge-readonly">{p.source}</span>}
        {!ro && (
          <>
            <Button onClick={() => setDialog({ kind: 'provider', provider: p })} label={`Edit provider ${p.name}`}>
              Edit
            </Button>
            <Button kind="danger" onClick={() => setDialog({ kind: 'delete-provider', provider: p.name })} label={`Delete provider ${p.name}`}>
              Delete
            </Button>
          </>
        )}
      </div>
      <dl class="kv">
        <dt>Base URL</dt>
        <dd>{net.base_url ?? 'default'}</dd>
        {NETWORK_FIELDS.map(([f, label]) => (
          <>
            <dt>{label}</dt>
            <dd>{net[f] === undefined ? 'default' : String(net[f])}</dd>
          </>
        ))}
        {headers.length > 0 && (
          <>
            <dt>Extra headers</dt>
            <dd>{headers.join(', ')}</dd>
          </>
        )}
        <dt>Concurrency and buffer</dt>
        <dd>{summary(p.concurrency_and_buffer_size)}</dd>
        <dt>Pricing overrides</dt>
        <dd>{p.pricing_overrides?.length ? <a href="#/models">{p.pricing_overrides.length}</a> : 'none'}</dd>
      </dl>
      <div class="row">
        <h3>Keys</h3>
        {!ro && (
          <Button onClick={() => setDialog({ kind: 'key', provider: p.name, key: undefined })} label={`Add key to ${p.name}`}>
            Add key
          </Button>
        )}
      </div>
      <Table<ProviderKey>
        caption={`Keys of ${p.name}`}
        rows={p.keys}
        rowKey={(k) => k.id}
        empty="No keys."
        columns={[
          { label: 'Name', key: 'name' },
          { label: 'Value', render: (k) => <code data-testid="key-value">{k.value}</code> },
          { label: 'Weight', numeric: true, render: (k) => String(k.weight ?? 1) },
          { label: 'Models', render: (k) => (k.models?.length ? k.models.join(', ') : 'all') },
          { label: 'Status', render: (k) => (k.enabled === false ? <span class="badge badge-muted">disabled</span> : <span class="badge badge-ok">enabled</span>) },
          ...actionsColumn(ro, (k: ProviderKey) => ({ name: `key ${k.name} of ${p.name}`, onEdit: () => setDialog({ kind: 'key', provider: p.name, key: k }), onDelete: () => setDialog({ kind: 'delete-key', provider: p.name, key: k }) })),
        ]}
      />
    </article>
  );
}
