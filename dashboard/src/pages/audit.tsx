// Audit log: who changed what, when and from where (/api/audit-logs). Search by actor, action,
// resource, outcome and time; page newest first (cursor); open a record to see the change (secrets
// already masked by the gateway); verify the hash chain; download the export as JSON lines.
import { useState } from 'preact/hooks';
import { get, query } from '../lib/api.ts';
import { useAction, useAsync } from '../lib/hooks.ts';
import { Banner, Button, ErrorBox, Field, Loading, Modal, PageHeader, Select, Table, TextInput } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import type { AuditLogList, AuditRecordView, AuditVerifyAnswer } from '../../../proxy/src/api/answers.ts';

const PAGE = 50;
const OUTCOMES = [{ value: '', label: 'any outcome' }, 'success', 'denied', 'failure'];

interface Filters {
  actor: string;
  action: string;
  resource: string;
  outcome: string;
  start: string;
  end: string;
}

const EMPTY: Filters = { actor: '', action: '', resource: '', outcome: '', start: '', end: '' };
/** A datetime-local value as RFC 3339 (the browser's time zone), or nothing. */
const rfc3339 = (local: string): string | undefined => (local ? new Date(local).toISOString() : undefined);

function filterQuery(f: Filters): Record<string, string | undefined> {
  return { actor: f.actor.trim() || undefined, action: f.action.trim() || undefined, resource: f.resource.trim() || undefined, outcome: f.outcome || undefined, start_time: rfc3339(f.start), end_time: rfc3339(f.end) };
}

export function AuditPage(props: PageProps) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  // Cursors of the pages before this one (the first page has none).
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors.at(-1);
  const list = useAsync(() => get<AuditLogList>(`/api/audit-logs${query({ ...filterQuery(filters), limit: PAGE, cursor })}`), [filters, cursor]);
  const [open, setOpen] = useState<AuditRecordView | undefined>(undefined);
  const verify = useAction(() => get<AuditVerifyAnswer>('/api/audit-logs/verify'));
  const [verified, setVerified] = useState<AuditVerifyAnswer | undefined>(undefined);
  const set = (k: keyof Filters) => (v: string) => setDraft({ ...draft, [k]: v });

  if (!props.info.features.audit) {
    return (
      <>
        <PageHeader title="Audit log" />
        <Banner kind="warning">
          The audit log lives in the request-log store, and none is open on this gateway: set <code>logs_store</code> or <code>client.enable_logging</code> to record management changes.
        </Banner>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Audit log">
        <Button
          onClick={() =>
            void verify.run().then((r) => {
              if (r) setVerified(r);
            })
          }
          disabled={verify.busy}
        >
          Verify chain
        </Button>
        <a class="btn btn-default" href={`/api/audit-logs/export${query(filterQuery(filters))}`} download="audit-logs.jsonl">
          Export JSON lines
        </a>
      </PageHeader>
      <p class="muted">Every management change, login, failed login, logout, key issuance and revocation, and configuration reload. Records are chained by hashes: verification names the first record edited or removed.</p>
      <ErrorBox error={verify.error} />
      {verified && (
        <Banner kind={verified.valid ? 'success' : 'error'}>
          <span data-testid="verify-result">
            {verified.valid
              ? `The chain is intact: ${verified.records_checked} records checked${verified.head ? `, head #${verified.head.seq} ${verified.head.hash.slice(0, 16)}…` : ''}${verified.unverifiable ? ` (${verified.unverifiable} written under an earlier key, linked only)` : ''}.`
              : `The chain is broken at record #${verified.first_broken?.seq}: ${verified.first_broken?.message}`}
          </span>
        </Banner>
      )}
      <form
        class="row filters"
        aria-label="Search the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setCursors([undefined]);
          setFilters(draft);
        }}
      >
        <Field label="Actor">
          <TextInput name="actor" value={draft.actor} onInput={set('actor')} placeholder="name or key id" />
        </Field>
        <Field label="Action">
          <TextInput name="action" value={draft.action} onInput={set('action')} placeholder="create, login_failed…" />
        </Field>
        <Field label="Resource">
          <TextInput name="resource" value={draft.resource} onInput={set('resource')} placeholder="governance, providers…" />
        </Field>
        <Field label="Outcome">
          <Select name="outcome" value={draft.outcome} onChange={set('outcome')} options={OUTCOMES} />
        </Field>
        <Field label="From">
          <TextInput name="start" type="datetime-local" value={draft.start} onInput={set('start')} />
        </Field>
        <Field label="To">
          <TextInput name="end" type="datetime-local" value={draft.end} onInput={set('end')} />
        </Field>
        <Button type="submit" kind="primary">
          Search
        </Button>
      </form>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : (
        <>
          <p class="muted" data-testid="audit-total">
            {list.data?.total_count ?? 0} records
          </p>
          <Table<AuditRecordView>
            caption="Audit records"
            rows={list.data?.records ?? []}
            rowKey={(r) => r.id}
            empty="No record matches."
            onRowClick={setOpen}
            columns={[
              { label: '#', numeric: true, render: (r) => String(r.seq) },
              { label: 'When', render: (r) => new Date(r.timestamp).toLocaleString() },
              { label: 'Actor', render: (r) => `${r.actor.name ?? r.actor.id ?? '—'} (${r.actor.type})` },
              { label: 'Action', render: (r) => r.action },
              { label: 'Resource', render: (r) => [r.resource, r.resource_id].filter(Boolean).join(' / ') },
              { label: 'Outcome', render: (r) => `${r.outcome}${r.status_code ? ` ${r.status_code}` : ''}` },
              { label: 'From', render: (r) => r.actor.remote_address ?? '—' },
            ]}
          />
          <nav class="pager" aria-label="Audit pages">
            <Button onClick={() => setCursors(cursors.slice(0, -1))} disabled={cursors.length <= 1}>
              Newer
            </Button>
            <Button onClick={() => list.data?.next_cursor && setCursors([...cursors, list.data.next_cursor])} disabled={!list.data?.next_cursor}>
              Older
            </Button>
          </nav>
        </>
      )}
      {open && (
        <Modal title={`Audit record #${open.seq}`} onClose={() => setOpen(undefined)}>
          <pre class="mono" data-testid="audit-record">
            {JSON.stringify(open, null, 2)}
          </pre>
        </Modal>
      )}
    </>
  );
}
