// Teams and customers: lists with their budgets and rate limits (usage bars), create / edit / delete.
// `#/teams/<team id>` and `#/teams/customer/<id>` show one with the virtual keys that belong to it.
import { useState } from 'preact/hooks';
import type { PageProps } from './types.ts';
import './governance.css';
import { Banner, Button, ErrorBox, Loading, Modal, PageHeader, ReadOnlyBanner, Table } from '../ui/components.tsx';
import { del, get } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { LimitBars } from './budgets/limits.tsx';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { useUsage } from './budgets/use-usage.ts';
import type { UsageIndex } from './budgets/model.ts';
import { TeamForm, type Kind } from './teams/form.tsx';
import { actionsColumn } from './shared/row-actions.tsx';
import type { CustomerView as Customer, TeamView as Team, VirtualKeyView as VirtualKey } from '../../../proxy/src/api/answers.ts';

interface Lists {
  teams: Team[];
  customers: Customer[];
  keys: VirtualKey[];
}

async function loadLists(): Promise<Lists> {
  const [teams, customers, keys] = await Promise.all([
    get<{ teams: Team[] }>('/api/governance/teams'),
    get<{ customers: Customer[] }>('/api/governance/customers'),
    get<{ virtual_keys: VirtualKey[] }>('/api/governance/virtual-keys'),
  ]);
  return { teams: teams.teams, customers: customers.customers, keys: keys.virtual_keys };
}

type Target = { kind: Kind; record: Team | Customer | undefined };

export function TeamsPage({ rest, info }: PageProps) {
  const ro = info.read_only;
  const lists = useAsync(loadLists, []);
  const usage = useUsage();
  const [editing, setEditing] = useState<Target | undefined>(undefined);
  const [deleting, setDeleting] = useState<{ kind: Kind; record: Team | Customer } | undefined>(undefined);
  const data = lists.data;
  const customerName = (id?: string) => (id ? (data?.customers.find((c) => c.id === id)?.name ?? id) : '—');

  const detailKind: Kind | undefined = rest[0] === 'customer' ? 'customer' : rest[0] ? 'team' : undefined;
  const detailId = rest[0] === 'customer' ? rest[1] : rest[0];
  const detail = detailKind === 'customer' ? data?.customers.find((c) => c.id === detailId) : detailKind === 'team' ? data?.teams.find((t) => t.id === detailId) : undefined;
  const actions = (kind: Kind) => actionsColumn(ro, (r: Team | Customer) => ({ name: r.name, onEdit: () => setEditing({ kind, record: r }), onDelete: () => setDeleting({ kind, record: r }) }));

  return (
    <section class="stack">
      <PageHeader title="Teams & customers">
        <Button onClick={() => (lists.reload(), usage.reload())}>Refresh</Button>
        {!ro && (
          <>
            <Button kind="primary" onClick={() => setEditing({ kind: 'team', record: undefined })}>
              New team
            </Button>
            <Button kind="primary" onClick={() => setEditing({ kind: 'customer', record: undefined })}>
              New customer
            </Button>
          </>
        )}
      </PageHeader>
      {ro && <ReadOnlyBanner reason={info.read_only_reason} />}
      <ErrorBox error={lists.error} />
      <ErrorBox error={usage.error} />
      {lists.loading && !data && <Loading />}
      {detailKind && data && !detail && <Banner kind="error">{detailKind === 'team' ? 'Team' : 'Customer'} '{detailId}' not found.</Banner>}
      {detailKind && detail && data && <Detail kind={detailKind} record={detail} data={data} usage={usage.data} />}
      {data && (
        <>
          <h2>Teams</h2>
          <Table<Team>
            caption="Teams"
            rows={data.teams}
            rowKey={(t) => t.id}
            empty="No teams yet."
            columns={[
              { label: 'Name', render: (t) => <a href={`#/teams/${encodeURIComponent(t.id)}`}>{t.name}</a> },
              { label: 'Customer', render: (t) => customerName(t.customer_id) },
              { label: 'Virtual keys', numeric: true, render: (t) => String(data.keys.filter((k) => k.team_id === t.id).length) },
              { label: 'Usage', render: (t) => <LimitBars record={t} usage={usage.data} what={t.name} /> },
              ...actions('team'),
            ]}
          />
          <h2>Customers</h2>
          <Table<Customer>
            caption="Customers"
            rows={data.customers}
            rowKey={(c) => c.id}
            empty="No customers yet."
            columns={[
              { label: 'Name', render: (c) => <a href={`#/teams/customer/${encodeURIComponent(c.id)}`}>{c.name}</a> },
              { label: 'Teams', numeric: true, render: (c) => String(data.teams.filter((t) => t.customer_id === c.id).length) },
              { label: 'Virtual keys', numeric: true, render: (c) => String(data.keys.filter((k) => k.customer_id === c.id).length) },
              { label: 'Usage', render: (c) => <LimitBars record={c} usage={usage.data} what={c.name} /> },
              ...actions('customer'),
            ]}
          />
        </>
      )}
      {editing && data && (
        <Modal title={`${editing.record ? 'Edit' : 'New'} ${editing.kind}${editing.record ? ` '${editing.record.name}'` : ''}`} onClose={() => setEditing(undefined)}>
          <TeamForm
            kind={editing.kind}
            record={editing.record}
            customers={data.customers}
            onSaved={() => (setEditing(undefined), lists.reload(), usage.reload())}
            onCancel={() => setEditing(undefined)}
          />
        </Modal>
      )}
      {deleting && (
        <ConfirmDelete
          what={`${deleting.kind} '${deleting.record.name}'`}
          onConfirm={() => del(`/api/governance/${deleting.kind === 'team' ? 'teams' : 'customers'}/${encodeURIComponent(deleting.record.id)}`)}
          onClose={() => setDeleting(undefined)}
          onDone={() => (setDeleting(undefined), lists.reload())}
        />
      )}
    </section>
  );
}

function Detail(props: { kind: Kind; record: Team | Customer; data: Lists; usage: UsageIndex | undefined }) {
  const { kind, record, data } = props;
  const keys = data.keys.filter((k) => (kind === 'team' ? k.team_id === record.id : k.customer_id === record.id));
  const teams = kind === 'customer' ? data.teams.filter((t) => t.customer_id === record.id) : [];
  return (
    <div class="card stack">
      <div class="row">
        <h2>
          {kind === 'team' ? 'Team' : 'Customer'} {record.name}
        </h2>
        {record.source && <span class="badge badge-readonly">{record.source}</span>}
      </div>
      <LimitBars record={record} usage={props.usage} what={record.name} />
      {kind === 'customer' && <p>Teams: {teams.length ? teams.map((t, i) => [i ? ', ' : '', <a href={`#/teams/${encodeURIComponent(t.id)}`}>{t.name}</a>]) : 'none'}</p>}
      <p>Virtual keys: {keys.length ? keys.map((k, i) => [i ? ', ' : '', <a href={`#/virtual-keys/${encodeURIComponent(k.id)}`}>{k.name}</a>]) : 'none'}</p>
      <a href="#/teams">All teams and customers</a>
    </div>
  );
}
