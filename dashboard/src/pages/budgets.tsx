// Budgets and rate limits across the gateway: usage in the current window against each limit, when
// the window resets, and which virtual keys, teams, customers, model configs and providers use it.
import { useState } from 'preact/hooks';
import type { PageProps } from './types.ts';
import './governance.css';
import { Button, ErrorBox, Loading, Modal, PageHeader, ReadOnlyBanner, Table, UsageBar } from '../ui/components.tsx';
import { del } from '../lib/api.ts';
import { formatCost, formatNumber, formatTime } from '../lib/format.ts';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { BudgetForm, RateLimitForm } from './budgets/forms.tsx';
import { LIMIT_USER_LABEL, limitUserHref } from './budgets/model.ts';
import { useUsage } from './budgets/use-usage.ts';
import { actionsColumn } from './shared/row-actions.tsx';
import type { BudgetUsage, LimitUser, RateLimitUsage } from '../../../proxy/src/api/answers.ts';

function UsedBy(props: { users: LimitUser[] }) {
  if (!props.users.length) return <span class="muted">Not used</span>;
  return (
    <ul class="used-by">
      {props.users.map((u) => {
        const href = limitUserHref(u);
        return (
          <li>
            <span class="muted">{LIMIT_USER_LABEL[u.kind]}</span> {href ? <a href={href}>{u.name}</a> : u.name}
          </li>
        );
      })}
    </ul>
  );
}

type Editing = { kind: 'budget'; record: BudgetUsage | undefined } | { kind: 'rate_limit'; record: RateLimitUsage | undefined };

export function BudgetsPage({ info }: PageProps) {
  const ro = info.read_only;
  const usage = useUsage();
  const [editing, setEditing] = useState<Editing | undefined>(undefined);
  const [deleting, setDeleting] = useState<{ kind: 'budget' | 'rate_limit'; id: string } | undefined>(undefined);
  const budgets = usage.data ? [...usage.data.budgets.values()] : [];
  const rateLimits = usage.data ? [...usage.data.rateLimits.values()] : [];
  const saved = () => (setEditing(undefined), usage.reload());
  const label = (u: LimitUser[], id: string) => u[0]?.name ?? id;

  return (
    <section class="stack">
      <PageHeader title="Budgets & rate limits">
        <Button onClick={usage.reload}>Refresh</Button>
        {!ro && (
          <>
            <Button kind="primary" onClick={() => setEditing({ kind: 'budget', record: undefined })}>
              New budget
            </Button>
            <Button kind="primary" onClick={() => setEditing({ kind: 'rate_limit', record: undefined })}>
              New rate limit
            </Button>
          </>
        )}
      </PageHeader>
      {ro && <ReadOnlyBanner reason={info.read_only_reason} kind="VirtualKey" />}
      <ErrorBox error={usage.error} />
      {usage.loading && !usage.data && <Loading />}
      {usage.data && (
        <>
          <h2>Budgets</h2>
          <Table<BudgetUsage>
            caption="Budgets"
            rows={budgets}
            rowKey={(b) => b.id}
            empty="No budgets."
            columns={[
              { label: 'Id', render: (b) => <code>{b.id}</code> },
              { label: 'Used by', render: (b) => <UsedBy users={b.used_by} /> },
              { label: 'Usage', render: (b) => <UsageBar label={`Budget ${label(b.used_by, b.id)} (${b.reset_duration})`} used={b.current_usage} limit={b.max_limit} format={formatCost} /> },
              { label: 'Resets', render: (b) => <span class="nowrap">{formatTime(b.resets_at)}</span> },
              ...actionsColumn(ro, (b: BudgetUsage) => ({ name: `budget ${b.id}`, onEdit: () => setEditing({ kind: 'budget', record: b }), onDelete: () => setDeleting({ kind: 'budget', id: b.id }) })),
            ]}
          />
          <h2>Rate limits</h2>
          <Table<RateLimitUsage>
            caption="Rate limits"
            rows={rateLimits}
            rowKey={(r) => r.id}
            empty="No rate limits."
            columns={[
              { label: 'Id', render: (r) => <code>{r.id}</code> },
              { label: 'Used by', render: (r) => <UsedBy users={r.used_by} /> },
              {
                label: 'Tokens',
                render: (r) =>
                  r.token_max_limit !== undefined && r.token_current_usage !== undefined ? (
                    <UsageBar label={`Tokens ${label(r.used_by, r.id)} (${r.token_reset_duration ?? ''})`} used={r.token_current_usage} limit={r.token_max_limit} format={formatNumber} />
                  ) : (
                    <span class="muted">—</span>
                  ),
              },
              {
                label: 'Requests',
                render: (r) =>
                  r.request_max_limit !== undefined && r.request_current_usage !== undefined ? (
                    <UsageBar label={`Requests ${label(r.used_by, r.id)} (${r.request_reset_duration ?? ''})`} used={r.request_current_usage} limit={r.request_max_limit} format={formatNumber} />
                  ) : (
                    <span class="muted">—</span>
                  ),
              },
              ...actionsColumn(ro, (r: RateLimitUsage) => ({ name: `rate limit ${r.id}`, onEdit: () => setEditing({ kind: 'rate_limit', record: r }), onDelete: () => setDeleting({ kind: 'rate_limit', id: r.id }) })),
            ]}
          />
        </>
      )}
      {editing && (
        <Modal title={`${editing.record ? 'Edit' : 'New'} ${editing.kind === 'budget' ? 'budget' : 'rate limit'}${editing.record ? ` '${editing.record.id}'` : ''}`} onClose={() => setEditing(undefined)}>
          {editing.kind === 'budget' ? (
            <BudgetForm budget={editing.record} onSaved={saved} onCancel={() => setEditing(undefined)} />
          ) : (
            <RateLimitForm rateLimit={editing.record} onSaved={saved} onCancel={() => setEditing(undefined)} />
          )}
        </Modal>
      )}
      {deleting && (
        <ConfirmDelete
          what={`${deleting.kind === 'budget' ? 'budget' : 'rate limit'} '${deleting.id}'`}
          onConfirm={() => del(`/api/governance/${deleting.kind === 'budget' ? 'budgets' : 'rate-limits'}/${encodeURIComponent(deleting.id)}`)}
          onClose={() => setDeleting(undefined)}
          onDone={() => (setDeleting(undefined), usage.reload())}
        />
      )}
    </section>
  );
}
