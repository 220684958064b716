// Virtual keys: searchable list with usage against budgets and rate limits, a detail view, and
// create / edit / delete (the new key's value is shown once, as the create answer carries it).
import { useState } from 'preact/hooks';
import type { PageProps } from './types.ts';
import './governance.css';
import { Banner, Button, ErrorBox, Field, Loading, Modal, PageHeader, ReadOnlyBanner, ShownOnce, Table, TextInput } from '../ui/components.tsx';
import { del, get } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { LimitBars } from './budgets/limits.tsx';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { useUsage } from './budgets/use-usage.ts';
import { VirtualKeyForm, type ProviderOption } from './virtual-keys/form.tsx';
import { actionsColumn } from './shared/row-actions.tsx';
import type { CustomerView as Customer, TeamView as Team, VirtualKeyView as VirtualKey } from '../../../proxy/src/api/answers.ts';

interface Lists {
  keys: VirtualKey[];
  teams: Team[];
  customers: Customer[];
  providers: ProviderOption[];
}

async function loadLists(): Promise<Lists> {
  const [keys, teams, customers, providers] = await Promise.all([
    get<{ virtual_keys: VirtualKey[] }>('/api/governance/virtual-keys'),
    get<{ teams: Team[] }>('/api/governance/teams'),
    get<{ customers: Customer[] }>('/api/governance/customers'),
    get<{ providers: ProviderOption[] }>('/api/providers'),
  ]);
  return { keys: keys.virtual_keys, teams: teams.teams, customers: customers.customers, providers: providers.providers };
}

const matches = (vk: VirtualKey, q: string) => !q || [vk.name, vk.id, vk.description ?? ''].some((s) => s.toLowerCase().includes(q.toLowerCase()));

export function VirtualKeysPage({ rest, info }: PageProps) {
  const ro = info.read_only;
  const lists = useAsync(loadLists, []);
  const usage = useUsage();
  const [search, setSearch] = useState('');
  const [editing, setEditing] = useState<VirtualKey | 'new' | undefined>(undefined);
  const [deleting, setDeleting] = useState<VirtualKey | undefined>(undefined);
  const [created, setCreated] = useState<{ name: string; value: string } | undefined>(undefined);

  const data = lists.data;
  const teamName = (id?: string) => (id ? (data?.teams.find((t) => t.id === id)?.name ?? id) : undefined);
  const customerName = (id?: string) => (id ? (data?.customers.find((c) => c.id === id)?.name ?? id) : undefined);
  const owner = (vk: VirtualKey) => (vk.team_id ? `Team ${teamName(vk.team_id)}` : vk.customer_id ? `Customer ${customerName(vk.customer_id)}` : '—');
  const detail = rest[0] ? data?.keys.find((k) => k.id === rest[0]) : undefined;

  const saved = (vk: VirtualKey, isNew: boolean) => {
    setEditing(undefined);
    // Only the create answer carries the value in full; it is not kept anywhere else.
    if (isNew) setCreated({ name: vk.name, value: vk.value });
    lists.reload();
    usage.reload();
  };

  return (
    <section class="stack">
      <PageHeader title="Virtual keys">
        <Button onClick={() => (lists.reload(), usage.reload())}>Refresh</Button>
        {!ro && (
          <Button kind="primary" onClick={() => (setCreated(undefined), setEditing('new'))}>
            New virtual key
          </Button>
        )}
      </PageHeader>
      {ro && <ReadOnlyBanner reason={info.read_only_reason} kind="VirtualKey" />}
      {created && <ShownOnce label={`Virtual key '${created.name}'`} value={created.value} />}
      <ErrorBox error={lists.error} />
      <ErrorBox error={usage.error} />
      {lists.loading && !data && <Loading />}
      {rest[0] && data && !detail && <Banner kind="error">Virtual key '{rest[0]}' not found.</Banner>}
      {detail && data && (
        <VirtualKeyDetail vk={detail} owner={owner(detail)} usage={usage.data} ro={ro} onEdit={() => setEditing(detail)} onDelete={() => setDeleting(detail)} />
      )}
      {data && (
        <>
          <div class="toolbar">
            <Field label="Search virtual keys">
              <TextInput type="search" value={search} onInput={setSearch} name="search" placeholder="name, id or description" />
            </Field>
          </div>
          <Table<VirtualKey>
            caption="Virtual keys"
            rows={data.keys.filter((k) => matches(k, search))}
            rowKey={(k) => k.id}
            empty={search ? 'No virtual key matches.' : 'No virtual keys yet.'}
            onRowClick={(k) => (location.hash = `#/virtual-keys/${encodeURIComponent(k.id)}`)}
            columns={[
              { label: 'Name', render: (k) => <a href={`#/virtual-keys/${encodeURIComponent(k.id)}`}>{k.name}</a> },
              { label: 'Key', render: (k) => <code>{k.value}</code> },
              { label: 'Status', render: (k) => (k.is_active === false ? <span class="badge badge-muted">inactive</span> : <span class="badge badge-ok">active</span>) },
              { label: 'Team / customer', render: owner },
              { label: 'Providers', render: (k) => (k.provider_configs ?? []).map((pc) => pc.provider).join(', ') || '—' },
              { label: 'Usage', render: (k) => <LimitBars record={k} usage={usage.data} what={k.name} /> },
              ...actionsColumn(ro, (k: VirtualKey) => ({ name: k.name, onEdit: () => setEditing(k), onDelete: () => setDeleting(k) })),
            ]}
          />
        </>
      )}
      {editing && data && (
        <Modal title={editing === 'new' ? 'New virtual key' : `Edit virtual key '${editing.name}'`} onClose={() => setEditing(undefined)}>
          <VirtualKeyForm vk={editing === 'new' ? undefined : editing} teams={data.teams} customers={data.customers} providers={data.providers} onSaved={saved} onCancel={() => setEditing(undefined)} />
        </Modal>
      )}
      {deleting && (
        <ConfirmDelete
          what={`virtual key '${deleting.name}'`}
          onConfirm={() => del(`/api/governance/virtual-keys/${encodeURIComponent(deleting.id)}`)}
          onClose={() => setDeleting(undefined)}
          onDone={() => {
            setDeleting(undefined);
            if (rest[0]) location.hash = '#/virtual-keys';
            lists.reload();
          }}
        />
      )}
    </section>
  );
}

function VirtualKeyDetail(props: { vk: VirtualKey; owner: string; usage: Parameters<typeof LimitBars>[0]['usage']; ro: boolean; onEdit: () => void; onDelete: () => void }) {
  const { vk } = props;
  return (
    <div class="card stack" data-testid="vk-detail">
      <div class="row">
        <h2>{vk.name}</h2>
        {vk.is_active === false ? <span class="badge badge-muted">inactive</span> : <span class="badge badge-ok">active</span>}
        {vk.source && <span class="badge badge-readonly">{vk.source}</span>}
      </div>
      <dl class="kv">
        <dt>Id</dt>
        <dd>
          <code>{vk.id}</code>
        </dd>
        <dt>Key</dt>
        <dd>
          <code>{vk.value}</code>
        </dd>
        <dt>Team / customer</dt>
        <dd>{props.owner}</dd>
        {vk.description && (
          <>
            <dt>Description</dt>
            <dd>{vk.description}</dd>
          </>
        )}
      </dl>
      <h3>Usage</h3>
      <LimitBars record={vk} usage={props.usage} what={vk.name} />
      <h3>Provider configs</h3>
      <Table
        caption={`Provider configs of ${vk.name}`}
        rows={vk.provider_configs ?? []}
        empty="No provider: this key can call nothing."
        columns={[
          { label: 'Provider', key: 'provider' },
          { label: 'Allowed models', render: (pc) => (pc.allowed_models ?? []).join(', ') || 'none' },
          { label: 'Keys', render: (pc) => (pc.key_ids ?? []).join(', ') || 'none' },
          { label: 'Weight', numeric: true, render: (pc) => (pc.weight === null ? 'not weighted' : String(pc.weight ?? 1)) },
          { label: 'Usage', render: (pc) => <LimitBars record={pc} usage={props.usage} what={`${vk.name} / ${pc.provider}`} /> },
        ]}
      />
      <div class="row">
        <a href="#/virtual-keys">All virtual keys</a>
        <a href={`#/logs?virtual_key_ids=${encodeURIComponent(vk.id)}`}>Requests of this key</a>
        {!props.ro && (
          <>
            <Button onClick={props.onEdit}>Edit</Button>
            <Button kind="danger" onClick={props.onDelete}>
              Delete
            </Button>
          </>
        )}
      </div>
    </div>
  );
}
