// Management API keys (/api/management-keys): issue a key with a name, scopes and an expiry (its
// value shown once), list keys with their last use, revoke one. Keys in config.json are not listed:
// they are the configuration's, and hold every scope.
import { useState } from 'preact/hooks';
import { del, get, post } from '../lib/api.ts';
import { useAction, useAsync } from '../lib/hooks.ts';
import { Banner, Button, Checkbox, ErrorBox, Field, Loading, Modal, PageHeader, ShownOnce, Table, TextInput } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import type { IssuedManagementKey, ManagementKeyList, ManagementKeyView } from '../../../proxy/src/api/answers.ts';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

export function ManagementKeysPage(props: PageProps) {
  const list = useAsync(() => get<ManagementKeyList>('/api/management-keys'), []);
  const [issuing, setIssuing] = useState(false);
  const [issued, setIssued] = useState<IssuedManagementKey | undefined>(undefined);
  const [revoking, setRevoking] = useState<ManagementKeyView | undefined>(undefined);
  if (!props.info.features.audit) {
    return (
      <>
        <PageHeader title="Management keys" />
        <Banner kind="warning">
          Issued keys live in the request-log store, and none is open on this gateway: set <code>logs_store</code> or <code>client.enable_logging</code>. Keys in <code>governance.auth_config.api_keys</code> work without one.
        </Banner>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Management keys">
        <Button kind="primary" onClick={() => setIssuing(true)}>
          Issue key
        </Button>
      </PageHeader>
      <p class="muted">Keys for scripts and pipelines calling /api, each limited to the scopes it needs. The value is shown once; only its digest is stored. A revoked key stops working on every replica within a second.</p>
      {issued && <ShownOnce label={`Key ${issued.name}`} value={issued.value} />}
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : (
        <Table<ManagementKeyView>
          caption="Management keys"
          rows={list.data?.keys ?? []}
          rowKey={(k) => k.id}
          empty="No key issued yet."
          columns={[
            { label: 'Name', render: (k) => k.name },
            { label: 'Key', render: (k) => <code>{k.prefix}…</code> },
            { label: 'Scopes', render: (k) => k.scopes.join(', ') },
            { label: 'Status', render: (k) => k.status },
            { label: 'Expires', render: (k) => when(k.expires_at) },
            { label: 'Last used', render: (k) => when(k.last_used_at) },
            { label: 'Created', render: (k) => `${when(k.created_at)}${k.created_by ? ` by ${k.created_by}` : ''}` },
            {
              label: 'Actions',
              render: (k) =>
                k.status === 'revoked' ? (
                  <span class="muted">revoked {when(k.revoked_at)}</span>
                ) : (
                  <Button kind="danger" onClick={() => setRevoking(k)}>
                    Revoke
                  </Button>
                ),
            },
          ]}
        />
      )}
      {issuing && (
        <IssueForm
          scopes={list.data?.scopes ?? []}
          onClose={() => setIssuing(false)}
          onIssued={(k) => {
            setIssuing(false);
            setIssued(k);
            list.reload();
          }}
        />
      )}
      {revoking && (
        <ConfirmDelete
          what={`key ${revoking.name}`}
          title={`Revoke key ${revoking.name}?`}
          confirmLabel="Revoke"
          onConfirm={() => del(`/api/management-keys/${encodeURIComponent(revoking.id)}`)}
          onClose={() => setRevoking(undefined)}
          onDone={() => {
            setRevoking(undefined);
            list.reload();
          }}
        >
          Scripts using it are refused from now on, on every replica. This cannot be undone.
        </ConfirmDelete>
      )}
    </>
  );
}

function IssueForm(props: { scopes: readonly string[]; onClose: () => void; onIssued: (k: IssuedManagementKey) => void }) {
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const action = useAction(() => post<IssuedManagementKey>('/api/management-keys', { name, scopes: chosen, ...(expires && { expires_at: new Date(expires).toISOString() }) }));
  const param = (action.error as { param?: string } | undefined)?.param;
  return (
    <Modal title="Issue a management key" onClose={props.onClose}>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run().then((k) => k && props.onIssued(k));
        }}
      >
        <Field label="Name" error={param === 'name' ? 'required' : undefined}>
          <TextInput name="name" value={name} onInput={setName} required />
        </Field>
        <fieldset class="scopes">
          <legend>Scopes</legend>
          {props.scopes.map((s) => (
            <Checkbox label={s} name={`scope-${s}`} checked={chosen.includes(s)} onChange={(on) => setChosen(on ? [...chosen, s] : chosen.filter((c) => c !== s))} />
          ))}
        </fieldset>
        <Field label="Expires (optional)">
          <TextInput name="expires" type="datetime-local" value={expires} onInput={setExpires} />
        </Field>
        <ErrorBox error={action.error} />
        <div class="row">
          <Button type="submit" kind="primary" disabled={action.busy}>
            Issue
          </Button>
          <Button onClick={props.onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  );
}
