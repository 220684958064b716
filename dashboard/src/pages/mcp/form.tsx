// Add and edit form of an MCP client. Edits send every field (null for those that no longer apply,
// e.g. connection_string after switching to stdio): PUT merges the body into the stored client, and
// header and env values shown masked are kept as stored when sent back unchanged.
import { Checkbox, ErrorBox, Field, Select, TextArea, TextInput } from '../../ui/components.tsx';
import { FormButtons } from '../../ui/form.tsx';
import { useCheckedForm, type Errors } from '../shared/checked-form.ts';
import { HeadersField, headerLines, parseHeaders } from '../shared/headers.tsx';
import { CONNECTION_TYPES } from './types.ts';
import type { McpClientConfigView as McpClientConfig } from '../../../../proxy/src/api/answers.ts';

interface FormState {
  name: string;
  client_id: string;
  connection_type: McpClientConfig['connection_type'];
  url: string;
  command: string;
  args: string;
  envs: string;
  auth_type: string;
  headers: string;
  tools_to_execute: string;
  tools_to_auto_execute: string;
  tool_sync_interval: string;
  is_code_mode_client: boolean;
  is_ping_available: boolean;
  allow_on_all_virtual_keys: boolean;
  allow_without_virtual_key: boolean;
}

const lines = (s: string): string[] =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const list = (s: string): string[] =>
  s
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);

function initial(c: McpClientConfig | undefined): FormState {
  return {
    name: c?.name ?? '',
    client_id: c?.client_id ?? '',
    connection_type: c?.connection_type ?? 'http',
    url: c ? (c.connection_type === 'websocket' ? (c.websocket_config?.url ?? '') : (c.connection_string ?? c.http_config?.url ?? '')) : '',
    command: c?.stdio_config?.command ?? '',
    args: (c?.stdio_config?.args ?? []).join('\n'),
    envs: (c?.stdio_config?.envs ?? []).join('\n'),
    auth_type: c?.auth_type ?? (c?.headers && Object.keys(c.headers).length ? 'headers' : 'none'),
    headers: headerLines(c?.headers),
    tools_to_execute: (c?.tools_to_execute ?? ['*']).join(', '),
    tools_to_auto_execute: (c?.tools_to_auto_execute ?? []).join(', '),
    tool_sync_interval: c?.tool_sync_interval ?? '',
    is_code_mode_client: c?.is_code_mode_client ?? false,
    is_ping_available: c?.is_ping_available ?? true,
    allow_on_all_virtual_keys: c?.allow_on_all_virtual_keys ?? false,
    allow_without_virtual_key: c?.allow_without_virtual_key ?? false,
  };
}

function build(s: FormState, editing: boolean): { body: Record<string, unknown>; errors: Errors } {
  const errors: Errors = {};
  if (!s.name.trim()) errors.name = 'Name is required.';
  else if (!/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(s.name.trim())) errors.name = 'Start with a letter or _, then letters, digits, _ or - (at most 64).';
  const t = s.connection_type;
  if (t !== 'stdio' && !s.url.trim()) errors.url = 'URL is required.';
  if (t === 'stdio' && !s.command.trim()) errors.command = 'Command is required.';
  const headers = parseHeaders(s.headers);
  if (s.auth_type === 'headers' && headers.error) errors.headers = headers.error;
  const omit = editing ? null : undefined;
  const body: Record<string, unknown> = {
    name: s.name.trim(),
    connection_type: t,
    connection_string: t === 'http' || t === 'sse' ? s.url.trim() : omit,
    http_config: omit,
    websocket_config: t === 'websocket' ? { url: s.url.trim() } : omit,
    stdio_config: t === 'stdio' ? { command: s.command.trim(), args: lines(s.args), ...(lines(s.envs).length && { envs: lines(s.envs) }) } : omit,
    auth_type: s.auth_type,
    headers: s.auth_type === 'headers' && Object.keys(headers.headers).length ? headers.headers : omit,
    tools_to_execute: list(s.tools_to_execute),
    tools_to_auto_execute: list(s.tools_to_auto_execute),
    tool_sync_interval: s.tool_sync_interval.trim() || omit,
    is_code_mode_client: s.is_code_mode_client,
    is_ping_available: s.is_ping_available,
    allow_on_all_virtual_keys: s.allow_on_all_virtual_keys,
    allow_without_virtual_key: s.allow_without_virtual_key,
  };
  if (!editing && s.client_id.trim()) body.client_id = s.client_id.trim();
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return { body, errors };
}

/** `stdio_config.command`, `headers.Authorization` → the form field the error belongs to. */
function fieldOf(param: string | undefined): string | undefined {
  if (!param) return undefined;
  if (param.startsWith('stdio_config.command')) return 'command';
  if (/^(connection_string|websocket_config|http_config)/.test(param)) return 'url';
  return param.split(/[.[]/)[0];
}

export function McpClientForm(props: { existing?: McpClientConfig; onSubmit: (body: Record<string, unknown>) => Promise<unknown>; onCancel: () => void; busy: boolean; error: unknown }) {
  const { s, set, err, setErrors } = useCheckedForm(() => initial(props.existing), props.error, fieldOf);
  const submit = (e: Event) => {
    e.preventDefault();
    const { body, errors: found } = build(s, !!props.existing);
    setErrors(found);
    if (Object.keys(found).length === 0) void props.onSubmit(body);
  };
  const t = s.connection_type;
  return (
    <form class="form mcp-form" onSubmit={submit} noValidate>
      <Field label="Name" error={err('name')} hint="Tool names are prefixed with it; the global object name in code mode.">
        <TextInput value={s.name} onInput={(v) => set('name', v)} name="name" required invalid={!!err('name')} />
      </Field>
      {!props.existing && (
        <Field label="Client id (optional)" error={err('client_id')} hint="Defaults to the name; cannot change later.">
          <TextInput value={s.client_id} onInput={(v) => set('client_id', v)} name="client_id" invalid={!!err('client_id')} />
        </Field>
      )}
      <Field label="Connection type" error={err('connection_type')}>
        <Select value={t} onChange={(v) => set('connection_type', v as FormState['connection_type'])} options={CONNECTION_TYPES} name="connection_type" />
      </Field>
      {t === 'stdio' ? (
        <>
          <Field label="Command" error={err('command')}>
            <TextInput value={s.command} onInput={(v) => set('command', v)} name="command" invalid={!!err('command')} placeholder="npx" />
          </Field>
          <Field label="Arguments" hint="One per line." error={err('stdio_config')}>
            <TextArea value={s.args} onInput={(v) => set('args', v)} name="args" rows={3} mono />
          </Field>
          <Field label="Environment" hint="NAME=value or NAME=env.VAR, one per line; stored values are shown masked and kept when unchanged.">
            <TextArea value={s.envs} onInput={(v) => set('envs', v)} name="envs" rows={2} mono />
          </Field>
        </>
      ) : (
        <Field label="Server URL" error={err('url')}>
          <TextInput type="url" value={s.url} onInput={(v) => set('url', v)} name="url" invalid={!!err('url')} placeholder={t === 'websocket' ? 'wss://…' : 'https://…/mcp'} />
        </Field>
      )}
      <Field label="Authentication" error={err('auth_type')}>
        <Select value={s.auth_type} onChange={(v) => set('auth_type', v)} options={['none', 'headers', ...(s.auth_type === 'oauth' ? ['oauth'] : [])]} name="auth_type" />
      </Field>
      {s.auth_type === 'headers' && (
        <HeadersField value={s.headers} onInput={(v) => set('headers', v)} error={err('headers')} hint='One "Header-Name: value" per line; values may be env.VAR. Stored values are shown masked and kept when unchanged.' />
      )}
      <Field label="Tools to execute" error={err('tools_to_execute')} hint="Comma-separated; * for all, empty for none.">
        <TextInput value={s.tools_to_execute} onInput={(v) => set('tools_to_execute', v)} name="tools_to_execute" />
      </Field>
      <Field label="Tools to auto-execute" error={err('tools_to_auto_execute')} hint="Run unattended in agent mode; comma-separated.">
        <TextInput value={s.tools_to_auto_execute} onInput={(v) => set('tools_to_auto_execute', v)} name="tools_to_auto_execute" />
      </Field>
      <Field label="Tool sync interval" error={err('tool_sync_interval')} hint="e.g. 10m; empty or 0 uses the global one; negative disables.">
        <TextInput value={s.tool_sync_interval} onInput={(v) => set('tool_sync_interval', v)} name="tool_sync_interval" />
      </Field>
      <Checkbox label="Code-mode client" checked={s.is_code_mode_client} onChange={(v) => set('is_code_mode_client', v)} name="is_code_mode_client" />
      <Checkbox label="Server answers ping (health checks)" checked={s.is_ping_available} onChange={(v) => set('is_ping_available', v)} name="is_ping_available" />
      <Checkbox label="Allow on every virtual key" checked={s.allow_on_all_virtual_keys} onChange={(v) => set('allow_on_all_virtual_keys', v)} name="allow_on_all_virtual_keys" />
      <Checkbox label="Offer to callers without a virtual key" checked={s.allow_without_virtual_key} onChange={(v) => set('allow_without_virtual_key', v)} name="allow_without_virtual_key" />
      <ErrorBox error={props.error} />
      <FormButtons class="form-actions" busy={props.busy} label={props.existing ? 'Save changes' : 'Add client'} onCancel={props.onCancel} />
    </form>
  );
}
