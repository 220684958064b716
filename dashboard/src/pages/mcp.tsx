// MCP: the clients of this gateway (/api/mcp) with their live state on this replica (connected, or
// error with the reason), their tools, reconnect, add/edit/delete, and the tool call logs.
// In Kubernetes mode the clients are read-only (edit the MCPClient resources); reconnect changes no
// configuration and stays available there, as the server allows it.
import { useEffect, useState } from 'preact/hooks';
import { del, get, post, put } from '../lib/api.ts';
import { useAction, useAsync } from '../lib/hooks.ts';
import { subscribe } from '../lib/live.ts';
import { Banner, Button, ErrorBox, Loading, Modal, PageHeader, ReadOnlyBanner, Table } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import { McpClientForm } from './mcp/form.tsx';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import { McpLogs } from './mcp/logs.tsx';
import { stateOf, targetOf } from './mcp/types.ts';
// Shares the webhooks page's layout classes (filters, pills, property lists).
import './webhooks.css';
import type { McpClientView as McpClient } from '../../../proxy/src/api/answers.ts';

/** Client states change without a page action (a server going away): re-read them this often. */
const POLL_MS = 5_000;
const clientPath = (id: string) => `/api/mcp/client/${encodeURIComponent(id)}`;

export function McpPage(props: PageProps) {
  const id = props.rest[0];
  return (
    <div class="wm">
      {props.info.read_only && <ReadOnlyBanner reason={props.info.read_only_reason} kind="MCPClient" />}
      {id ? <ClientDetail id={decodeURIComponent(id)} readOnly={props.info.read_only} /> : <ClientList readOnly={props.info.read_only} />}
    </div>
  );
}

function StatePill(props: { client: McpClient }) {
  const s = stateOf(props.client);
  const kind = s === 'connected' ? 'ok' : s === 'error' ? 'error' : s === 'connecting' ? 'warn' : 'muted';
  return (
    <span class={`badge badge-${kind}`} data-testid="mcp-state">
      {s}
    </span>
  );
}

/**
 * State changes show up without a reload: at once when the live socket tells of one
 * (mcp_client_state), and by polling as a fallback (the socket may be down, or another replica's).
 */
function useFreshClients(reload: () => void, deps: readonly unknown[]) {
  useEffect(() => {
    const t = setTimeout(reload, POLL_MS);
    return () => clearTimeout(t);
  }, deps);
  useEffect(() => subscribe('notification', (m) => m.kind === 'mcp_client_state' && reload()), []);
}

/** Reconnect answers 502 with the reason when the server is still unreachable: shown as an error. */
function useReconnect(onDone: () => void) {
  const [done, setDone] = useState<string | undefined>(undefined);
  const action = useAction(async (id: string) => {
    setDone(undefined);
    try {
      const res = await post<{ message: string }>(`${clientPath(id)}/reconnect`);
      setDone(res.message);
      return res;
    } finally {
      onDone();
    }
  });
  return { ...action, done };
}

function ClientList(props: { readOnly: boolean }) {
  const clients = useAsync(() => get<McpClient[]>('/api/mcp/clients'), []);
  const [adding, setAdding] = useState(false);
  const reconnect = useReconnect(clients.reload);
  useFreshClients(clients.reload, [clients.data, clients.error]);
  return (
    <>
      <PageHeader title="MCP">
        <Button kind="primary" onClick={() => setAdding(true)} disabled={props.readOnly}>
          Add client
        </Button>
      </PageHeader>
      <h2>Clients</h2>
      <ErrorBox error={clients.error} />
      <ErrorBox error={reconnect.error} />
      {reconnect.done && <Banner kind="success">{reconnect.done}</Banner>}
      {clients.loading && !clients.data ? (
        <Loading />
      ) : (
        <Table<McpClient>
          caption="MCP clients"
          rows={clients.data ?? []}
          rowKey={(c) => c.config.client_id}
          empty="No MCP client configured."
          columns={[
            { label: 'Name', render: (c) => <a href={`#/mcp/${encodeURIComponent(c.config.client_id)}`}>{c.config.name}</a> },
            { label: 'Type', render: (c) => c.config.connection_type },
            { label: 'Server', render: (c) => <span class="mono wrap">{targetOf(c.config)}</span> },
            { label: 'State', render: (c) => <StatePill client={c} /> },
            { label: 'Reason', render: (c) => <span class="wrap">{c.error ?? ''}</span> },
            { label: 'Tools', numeric: true, render: (c) => c.tools.length },
            {
              label: 'Actions',
              render: (c) => (
                <Button onClick={() => void reconnect.run(c.config.client_id)} disabled={reconnect.busy} label={`Reconnect ${c.config.name}`}>
                  Reconnect
                </Button>
              ),
            },
          ]}
        />
      )}
      <h2>Tool calls</h2>
      <McpLogs />
      {adding && <AddDialog onClose={() => setAdding(false)} onAdded={clients.reload} />}
    </>
  );
}

function AddDialog(props: { onClose: () => void; onAdded: () => void }) {
  const add = useAction((body: Record<string, unknown>) => post<{ client?: McpClient }>('/api/mcp/client', body));
  const submit = async (body: Record<string, unknown>) => {
    if (await add.run(body)) {
      props.onAdded();
      props.onClose();
    }
  };
  return (
    <Modal title="Add MCP client" onClose={props.onClose}>
      <McpClientForm onSubmit={submit} onCancel={props.onClose} busy={add.busy} error={add.error} />
    </Modal>
  );
}

function ClientDetail(props: { id: string; readOnly: boolean }) {
  const one = useAsync(() => get<McpClient>(clientPath(props.id)), [props.id]);
  const [dialog, setDialog] = useState<'edit' | 'delete' | undefined>(undefined);
  const reconnect = useReconnect(one.reload);
  useFreshClients(one.reload, [one.data, one.error]);
  const c = one.data;
  if (one.loading && !c) return <Loading />;
  if (!c) {
    return (
      <>
        <PageHeader title={`MCP client ${props.id}`} />
        <ErrorBox error={one.error} />
        <a href="#/mcp">Back to MCP</a>
      </>
    );
  }
  const managed = props.readOnly || c.managed_by !== undefined;
  const cfg = c.config;
  return (
    <>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/mcp">MCP</a> / <span>{cfg.name}</span>
      </nav>
      <PageHeader title={`MCP client ${cfg.name}`}>
        <Button onClick={() => void reconnect.run(cfg.client_id)} disabled={reconnect.busy} label={`Reconnect ${cfg.name}`}>
          Reconnect
        </Button>
        <Button onClick={() => setDialog('edit')} disabled={managed}>
          Edit
        </Button>
        <Button kind="danger" onClick={() => setDialog('delete')} disabled={managed}>
          Delete
        </Button>
      </PageHeader>
      <ErrorBox error={reconnect.error} />
      {reconnect.done && <Banner kind="success">{reconnect.done}</Banner>}
      <dl class="kv">
        <dt>State</dt>
        <dd>
          <StatePill client={c} />
          {c.error && <span class="wrap"> {c.error}</span>}
        </dd>
        <dt>Client id</dt>
        <dd class="mono">{cfg.client_id}</dd>
        <dt>Connection</dt>
        <dd>
          {cfg.connection_type}: <span class="mono wrap">{targetOf(cfg)}</span>
        </dd>
        {cfg.headers && Object.keys(cfg.headers).length > 0 && (
          <>
            <dt>Headers</dt>
            <dd class="mono">
              {Object.entries(cfg.headers)
                .map(([k, v]) => `${k}: ${v}`)
                .join('; ')}
            </dd>
          </>
        )}
        <dt>Tools to execute</dt>
        <dd>{(cfg.tools_to_execute ?? []).join(', ') || 'none'}</dd>
        <dt>Auto-execute</dt>
        <dd>{(cfg.tools_to_auto_execute ?? []).join(', ') || 'none'}</dd>
        <dt>Code mode</dt>
        <dd>{cfg.is_code_mode_client ? 'yes' : 'no'}</dd>
        <dt>Virtual keys</dt>
        <dd>
          {c.vk_configs.length ? c.vk_configs.map((v) => `${v.virtual_key_name}: ${v.tools_to_execute.join(', ') || 'none'}`).join('; ') : cfg.allow_on_all_virtual_keys ? 'every key (allow_on_all_virtual_keys)' : 'none'}
        </dd>
        {c.source && (
          <>
            <dt>Managed by</dt>
            <dd>{c.source}</dd>
          </>
        )}
      </dl>
      <h2>Tools ({c.tools.length})</h2>
      {c.tools.length === 0 ? (
        <p class="muted">{c.state === 'connected' ? 'The server lists no tools.' : 'No tools while the client is not connected.'}</p>
      ) : (
        <ul class="tool-list" aria-label={`Tools of ${cfg.name}`}>
          {c.tools.map((t) => (
            <li key={t.name}>
              <span class="mono">{t.name}</span>
              {t.description && <span class="muted"> — {t.description}</span>}
              {t.parameters !== undefined && (
                <details>
                  <summary>Parameters</summary>
                  <pre class="json mono">{JSON.stringify(t.parameters, null, 2)}</pre>
                </details>
              )}
            </li>
          ))}
        </ul>
      )}
      {dialog === 'edit' && <EditDialog client={c} onClose={() => setDialog(undefined)} onSaved={one.reload} />}
      {dialog === 'delete' && <DeleteDialog client={c} onClose={() => setDialog(undefined)} />}
    </>
  );
}

function EditDialog(props: { client: McpClient; onClose: () => void; onSaved: () => void }) {
  const save = useAction((body: Record<string, unknown>) => put(clientPath(props.client.config.client_id), body));
  const submit = async (body: Record<string, unknown>) => {
    if (await save.run(body)) {
      props.onSaved();
      props.onClose();
    }
  };
  return (
    <Modal title={`Edit MCP client ${props.client.config.name}`} onClose={props.onClose}>
      <McpClientForm existing={props.client.config} onSubmit={submit} onCancel={props.onClose} busy={save.busy} error={save.error} />
    </Modal>
  );
}

function DeleteDialog(props: { client: McpClient; onClose: () => void }) {
  const name = props.client.config.name;
  const done = () => {
    props.onClose();
    location.hash = '#/mcp';
  };
  return (
    <ConfirmDelete what={`MCP client ${name}`} title={`Delete MCP client ${name}`} confirmLabel="Delete client" onConfirm={() => del(clientPath(props.client.config.client_id))} onClose={props.onClose} onDone={done}>
      Disconnects the client and removes it, with every virtual key's access to its tools.
    </ConfirmDelete>
  );
}
