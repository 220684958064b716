// Webhooks: the endpoints (/api/webhooks), each with its signing secret shown once (on create and on
// rotation), test deliveries, and the delivery history with attempts and redelivery.
// In Kubernetes mode the endpoints are read-only (edit the Webhook resources), but a test delivery
// and a redelivery are not configuration changes and stay available, as the server allows them.
import { useState } from 'preact/hooks';
import { del, get, post, put, query } from '../lib/api.ts';
import { useAction, useAsync } from '../lib/hooks.ts';
import { Banner, Button, ErrorBox, Field, Loading, Modal, PageHeader, ReadOnlyBanner, Select, ShownOnce, Table, TextInput } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import { DeliveryHistory } from './webhooks/deliveries.tsx';
import { WebhookForm } from './webhooks/form.tsx';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { WEBHOOK_EVENTS } from './webhooks/types.ts';
import './webhooks.css';
import type { Delivery, WebhookView as Webhook } from '../../../proxy/src/api/answers.ts';

const path = (id: string) => `/api/webhooks/${encodeURIComponent(id)}`;

export function WebhooksPage(props: PageProps) {
  const id = props.rest[0];
  return (
    <div class="wm">
      {props.info.read_only && <ReadOnlyBanner reason={props.info.read_only_reason} kind="Webhook" />}
      {!props.info.features.webhooks && (
        <Banner kind="warning">
          Webhook deliveries need the request-log store, and none is open on this gateway: set <code>logs_store</code> or <code>client.enable_logging</code> to create endpoints, send
          test deliveries and see the history.
        </Banner>
      )}
      {id ? <EndpointDetail id={decodeURIComponent(id)} readOnly={props.info.read_only} store={props.info.features.webhooks} /> : <EndpointList readOnly={props.info.read_only} store={props.info.features.webhooks} />}
    </div>
  );
}

function StatusPill(props: { w: Webhook }) {
  return <span class={`badge badge-${props.w.disabled ? 'muted' : 'ok'}`}>{props.w.status}</span>;
}

function EndpointList(props: { readOnly: boolean; store: boolean }) {
  const [search, setSearch] = useState('');
  const [event, setEvent] = useState('');
  const [status, setStatus] = useState('');
  const [creating, setCreating] = useState(false);
  const list = useAsync(() => get<{ webhooks: Webhook[]; count: number }>(`/api/webhooks${query({ search: search.trim(), event, status })}`), [search, event, status]);
  const all = useAsync(() => get<{ webhooks: Webhook[] }>('/api/webhooks'), [list.data]);

  return (
    <>
      <PageHeader title="Webhooks">
        <Button kind="primary" onClick={() => setCreating(true)} disabled={props.readOnly || !props.store}>
          New endpoint
        </Button>
      </PageHeader>
      <p class="muted">Signed HTTP callbacks when an async job completes or fails. Receivers verify the webhook-signature header with the endpoint's whsec_ secret.</p>
      <h2>Endpoints</h2>
      <div class="toolbar">
        <Field label="Search">
          <TextInput type="search" value={search} onInput={setSearch} placeholder="name or URL" />
        </Field>
        <Field label="Event">
          <Select value={event} onChange={setEvent} options={[{ value: '', label: 'Any event' }, ...WEBHOOK_EVENTS]} />
        </Field>
        <Field label="Status">
          <Select value={status} onChange={setStatus} options={[{ value: '', label: 'Any status' }, { value: 'active', label: 'active' }, { value: 'disabled', label: 'disabled' }]} />
        </Field>
      </div>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : (
        <Table<Webhook>
          caption="Webhook endpoints"
          rows={list.data?.webhooks ?? []}
          rowKey={(w) => w.id}
          empty={search || event || status ? 'No endpoint matches these filters.' : 'No webhook endpoint yet.'}
          columns={[
            { label: 'Name', render: (w) => <a href={`#/webhooks/${encodeURIComponent(w.id)}`}>{w.name}</a> },
            { label: 'URL', render: (w) => <span class="mono wrap">{w.url}</span> },
            { label: 'Events', render: (w) => w.events.join(', ') },
            { label: 'Status', render: (w) => <StatusPill w={w} /> },
            { label: 'Secret', render: (w) => w.secret_source },
            { label: 'Source', render: (w) => w.source ?? 'config' },
          ]}
        />
      )}
      {props.store && (
        <>
          <h2>Deliveries</h2>
          <DeliveryHistory webhooks={(all.data?.webhooks ?? []).map((w) => w.id)} />
        </>
      )}
      {creating && <CreateDialog onClose={() => setCreating(false)} onCreated={list.reload} />}
    </>
  );
}

/** Create, then the secret shown once in the same dialog: closing it is the last time it is visible. */
function CreateDialog(props: { onClose: () => void; onCreated: () => void }) {
  const [created, setCreated] = useState<{ webhook: Webhook; secret: string } | undefined>(undefined);
  const create = useAction((body: Record<string, unknown>) => post<{ webhook: Webhook; secret: string }>('/api/webhooks', body));
  const submit = async (body: Record<string, unknown>) => {
    const res = await create.run(body);
    if (res) {
      setCreated(res);
      props.onCreated();
    }
  };
  return (
    <Modal title={created ? `Endpoint ${created.webhook.name} created` : 'New webhook endpoint'} onClose={props.onClose}>
      {created ? (
        <>
          <ShownOnce label="Signing secret" value={created.secret} />
          <div class="form-actions">
            <a class="btn btn-primary" href={`#/webhooks/${encodeURIComponent(created.webhook.id)}`} onClick={props.onClose}>
              Open endpoint
            </a>
            <Button onClick={props.onClose}>Done</Button>
          </div>
        </>
      ) : (
        <WebhookForm onSubmit={submit} onCancel={props.onClose} busy={create.busy} error={create.error} />
      )}
    </Modal>
  );
}

type Dialog = 'edit' | 'rotate' | 'delete' | undefined;

function EndpointDetail(props: { id: string; readOnly: boolean; store: boolean }) {
  const one = useAsync(() => get<{ webhook: Webhook }>(path(props.id)), [props.id]);
  const [dialog, setDialog] = useState<Dialog>(undefined);
  const [refresh, setRefresh] = useState(0);
  const w = one.data?.webhook;
  const toggle = useAction((disabled: boolean) => put<{ webhook: Webhook }>(path(props.id), { disabled }));

  if (one.loading && !w) return <Loading />;
  if (!w) {
    return (
      <>
        <PageHeader title={`Webhook ${props.id}`} />
        <ErrorBox error={one.error} />
        <a href="#/webhooks">Back to webhooks</a>
      </>
    );
  }
  const managed = props.readOnly || w.managed_by !== undefined;
  return (
    <>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/webhooks">Webhooks</a> / <span>{w.name}</span>
      </nav>
      <PageHeader title={`Webhook ${w.name}`}>
        <Button onClick={() => setDialog('edit')} disabled={managed}>
          Edit
        </Button>
        <Button onClick={async () => (await toggle.run(!w.disabled)) && one.reload()} disabled={managed || toggle.busy}>
          {w.disabled ? 'Enable' : 'Disable'}
        </Button>
        <Button onClick={() => setDialog('rotate')} disabled={managed || !props.store || w.secret_source !== 'generated'}>
          Rotate secret
        </Button>
        <Button kind="danger" onClick={() => setDialog('delete')} disabled={managed}>
          Delete
        </Button>
      </PageHeader>
      <ErrorBox error={toggle.error} />
      <ErrorBox error={one.error} />
      {w.secret_source !== 'generated' && (
        <p class="muted">The signing secret comes from {w.secret_source === 'env' ? 'an environment variable' : 'config.json'}: rotate it there.</p>
      )}
      <dl class="kv">
        <dt>Status</dt>
        <dd>
          <StatusPill w={w} />
        </dd>
        <dt>URL</dt>
        <dd class="mono wrap">{w.url}</dd>
        <dt>Events</dt>
        <dd>{w.events.join(', ')}</dd>
        <dt>Payload</dt>
        <dd>{w.include_response ? 'response inlined (up to ' + w.max_response_payload_kbs + ' KB)' : 'result URL only'}</dd>
        <dt>Private network</dt>
        <dd>{w.allow_private_network ? 'allowed (plain http too)' : 'refused'}</dd>
        <dt>Retries</dt>
        <dd>
          {w.max_retries} retries, {w.retry_backoff_initial_seconds} s doubling up to {w.retry_backoff_max_seconds} s; {w.attempt_timeout_seconds} s per attempt; {w.max_concurrent_deliveries} at once per node
        </dd>
        <dt>Headers</dt>
        <dd class="mono">{Object.keys(w.headers).length ? Object.entries(w.headers).map(([k, v]) => `${k}: ${v}`).join('; ') : 'none'}</dd>
        <dt>Signing secret</dt>
        <dd>{w.secret_source} (never shown again after creation or rotation)</dd>
        {w.source && (
          <>
            <dt>Managed by</dt>
            <dd>{w.source}</dd>
          </>
        )}
      </dl>
      {props.store && (
        <>
          <TestDelivery webhook={w} onSent={() => setRefresh((n) => n + 1)} />
          <h2>Delivery history</h2>
          <DeliveryHistory webhook={w.id} refresh={refresh} />
        </>
      )}
      {dialog === 'edit' && <EditDialog webhook={w} onClose={() => setDialog(undefined)} onSaved={one.reload} />}
      {dialog === 'rotate' && <RotateDialog webhook={w} onClose={() => setDialog(undefined)} />}
      {dialog === 'delete' && <DeleteDialog webhook={w} onClose={() => setDialog(undefined)} />}
    </>
  );
}

/** Allowed in read-only mode too: a test delivery changes no configuration. */
function TestDelivery(props: { webhook: Webhook; onSent: () => void }) {
  const w = props.webhook;
  const [event, setEvent] = useState<string>(w.events[0] ?? WEBHOOK_EVENTS[0]);
  const [sent, setSent] = useState<Delivery | undefined>(undefined);
  const send = useAction(() => post<{ delivery: Delivery }>(`${path(w.id)}/test`, { event }));
  const run = async () => {
    setSent(undefined);
    const res = await send.run();
    if (res) {
      setSent(res.delivery);
      props.onSent();
    }
  };
  return (
    <section class="test-delivery" aria-labelledby="test-delivery-h">
      <h2 id="test-delivery-h">Test delivery</h2>
      <div class="toolbar">
        <Field label="Test event">
          <Select value={event} onChange={setEvent} options={WEBHOOK_EVENTS} />
        </Field>
        <Button kind="primary" onClick={() => void run()} disabled={send.busy || w.disabled}>
          Send test delivery
        </Button>
      </div>
      {w.disabled && <p class="muted">Enable the endpoint to send a test delivery.</p>}
      <ErrorBox error={send.error} />
      {sent && (
        <Banner kind="success">
          Test delivery <code>{sent.id}</code> queued for {sent.event}; its attempts appear in the history below.
        </Banner>
      )}
    </section>
  );
}

function EditDialog(props: { webhook: Webhook; onClose: () => void; onSaved: () => void }) {
  const save = useAction((body: Record<string, unknown>) => put<{ webhook: Webhook }>(path(props.webhook.id), body));
  const submit = async (body: Record<string, unknown>) => {
    if (Object.keys(body).length === 0) return props.onClose();
    if (await save.run(body)) {
      props.onSaved();
      props.onClose();
    }
  };
  return (
    <Modal title={`Edit webhook ${props.webhook.name}`} onClose={props.onClose}>
      <WebhookForm existing={props.webhook} onSubmit={submit} onCancel={props.onClose} busy={save.busy} error={save.error} />
    </Modal>
  );
}

/** Rotation takes effect at once (no grace window): the dialog says so before, and shows the new secret once after. */
function RotateDialog(props: { webhook: Webhook; onClose: () => void }) {
  const rotate = useAction(() => post<{ secret: string }>(`${path(props.webhook.id)}/rotate-secret`));
  const [secret, setSecret] = useState<string | undefined>(undefined);
  return (
    <Modal title={`Rotate the secret of ${props.webhook.name}`} onClose={props.onClose}>
      {secret ? (
        <>
          <ShownOnce label="New signing secret" value={secret} />
          <div class="form-actions">
            <Button onClick={props.onClose}>Done</Button>
          </div>
        </>
      ) : (
        <>
          <p>The current secret stops working immediately: deliveries from now on are signed with the new one only. Update the receiver right after.</p>
          <ErrorBox error={rotate.error} />
          <div class="form-actions">
            <Button kind="danger" disabled={rotate.busy} onClick={async () => setSecret((await rotate.run())?.secret)}>
              Rotate now
            </Button>
            <Button onClick={props.onClose}>Cancel</Button>
          </div>
        </>
      )}
    </Modal>
  );
}

function DeleteDialog(props: { webhook: Webhook; onClose: () => void }) {
  const name = props.webhook.name;
  const done = () => {
    props.onClose();
    location.hash = '#/webhooks';
  };
  return (
    <ConfirmDelete what={`webhook ${name}`} title={`Delete webhook ${name}`} confirmLabel="Delete endpoint" onConfirm={() => del(path(props.webhook.id))} onClose={props.onClose} onDone={done}>
      Deletes the endpoint and its signing secret. Jobs submitted with <code>x-bf-async-webhook: {name}</code> are then refused.
    </ConfirmDelete>
  );
}
