// Create and edit form of a webhook endpoint. The signing secret is not a field: it is generated on
// create and replaced only by rotation (the API refuses it in bodies). Edits are sent as a merge
// patch of the fields the user changed, so defaults never get written into config.json by accident.
import { Checkbox, ErrorBox, Field, TextInput } from '../../ui/components.tsx';
import { FormButtons, TextField } from '../../ui/form.tsx';
import { useCheckedForm, type Errors } from '../shared/checked-form.ts';
import { HeadersField, headerLines, parseHeaders } from '../shared/headers.tsx';
import { WEBHOOK_EVENTS } from './types.ts';
import type { WebhookView as Webhook } from '../../../../proxy/src/api/answers.ts';

const NUMBER_FIELDS = [
  ['max_retries', 'Max retries', 0],
  ['retry_backoff_initial_seconds', 'First retry after (s)', 1],
  ['retry_backoff_max_seconds', 'Longest retry delay (s)', 1],
  ['attempt_timeout_seconds', 'Attempt timeout (s)', 1],
  ['max_response_payload_kbs', 'Largest inlined response (KB)', 0],
  ['max_concurrent_deliveries', 'Concurrent deliveries per node', 1],
] as const;
type NumberField = (typeof NUMBER_FIELDS)[number][0];

const DEFAULTS: Record<NumberField, number> = {
  max_retries: 4,
  retry_backoff_initial_seconds: 30,
  retry_backoff_max_seconds: 1800,
  attempt_timeout_seconds: 10,
  max_response_payload_kbs: 256,
  max_concurrent_deliveries: 10,
};

interface FormState {
  name: string;
  url: string;
  events: string[];
  include_response: boolean;
  allow_private_network: boolean;
  headers: string;
  numbers: Record<NumberField, string>;
}

function initial(w: Webhook | undefined): FormState {
  return {
    name: w?.name ?? '',
    url: w?.url ?? '',
    events: w?.events ?? [...WEBHOOK_EVENTS],
    include_response: w?.include_response ?? false,
    allow_private_network: w?.allow_private_network ?? false,
    headers: headerLines(w?.headers),
    numbers: Object.fromEntries(NUMBER_FIELDS.map(([k]) => [k, String(w ? w[k] : DEFAULTS[k])])) as Record<NumberField, string>,
  };
}

function validate(s: FormState): { errors: Errors; headers: Record<string, string> } {
  const errors: Errors = {};
  if (!s.name.trim()) errors.name = 'Name is required.';
  if (!s.url.trim()) errors.url = 'URL is required.';
  if (s.events.length === 0) errors.events = 'Choose at least one event.';
  for (const [k, , min] of NUMBER_FIELDS) {
    const n = Number(s.numbers[k]);
    if (s.numbers[k].trim() === '' || !Number.isInteger(n) || n < min) errors[k] = `Must be a whole number ≥ ${min}.`;
  }
  const parsed = parseHeaders(s.headers);
  if (parsed.error) errors.headers = parsed.error;
  return { errors, headers: parsed.headers };
}

/** The body of POST /api/webhooks (create) or the merge patch of PUT (edit: changed fields only). */
function bodyOf(s: FormState, headers: Record<string, string>, existing: Webhook | undefined): Record<string, unknown> {
  const numbers = Object.fromEntries(NUMBER_FIELDS.map(([k]) => [k, Number(s.numbers[k])])) as Record<NumberField, number>;
  if (!existing) {
    const body: Record<string, unknown> = { name: s.name.trim(), url: s.url.trim(), events: s.events, include_response: s.include_response };
    if (s.allow_private_network) body.allow_private_network = true;
    if (Object.keys(headers).length) body.headers = headers;
    for (const [k] of NUMBER_FIELDS) if (numbers[k] !== DEFAULTS[k]) body[k] = numbers[k];
    return body;
  }
  const patch: Record<string, unknown> = {};
  if (s.url.trim() !== existing.url) patch.url = s.url.trim();
  if (s.events.join() !== existing.events.join()) patch.events = s.events;
  if (s.include_response !== existing.include_response) patch.include_response = s.include_response;
  if (s.allow_private_network !== existing.allow_private_network) patch.allow_private_network = s.allow_private_network;
  for (const [k] of NUMBER_FIELDS) if (numbers[k] !== existing[k]) patch[k] = numbers[k];
  const before = existing.headers ?? {};
  const changed = Object.keys(headers).length !== Object.keys(before).length || Object.entries(headers).some(([k, v]) => before[k] !== v);
  // The patch replaces the whole map (null removes it); values left redacted keep what is stored.
  if (changed) patch.headers = Object.keys(headers).length ? headers : null;
  return patch;
}

/** Which form field an API error names (`url`, `headers.X-Team`, `webhooks[0].url` → url/headers). */
function fieldOf(param: string | undefined): string | undefined {
  if (!param) return undefined;
  const last = param.replace(/^webhooks\[\d+\]\./, '').replace(/^webhook\./, '');
  return last.split('.')[0];
}

export function WebhookForm(props: { existing?: Webhook; onSubmit: (body: Record<string, unknown>) => Promise<unknown>; onCancel: () => void; busy: boolean; error: unknown }) {
  const { s, set, err, setErrors } = useCheckedForm(() => initial(props.existing), props.error, fieldOf);

  const submit = (e: Event) => {
    e.preventDefault();
    const { errors: found, headers } = validate(s);
    setErrors(found);
    if (Object.keys(found).length) return;
    void props.onSubmit(bodyOf(s, headers, props.existing));
  };

  return (
    <form class="form webhook-form" onSubmit={submit} noValidate>
      <Field label="Name" error={err('name')} hint={props.existing ? 'The name is the endpoint id and cannot change.' : 'Letters, digits, - and _; used in the x-bf-async-webhook header.'}>
        <TextInput value={s.name} onInput={(v) => set('name', v)} name="name" disabled={!!props.existing} required invalid={!!err('name')} />
      </Field>
      <Field label="URL" error={err('url')} hint="https, unless private networks are allowed.">
        <TextInput type="url" value={s.url} onInput={(v) => set('url', v)} name="url" required invalid={!!err('url')} placeholder="https://example.com/hooks/skybridge" />
      </Field>
      <fieldset class="fieldset">
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((ev) => (
          <Checkbox label={ev} checked={s.events.includes(ev)} onChange={(on) => set('events', on ? WEBHOOK_EVENTS.filter((x) => x === ev || s.events.includes(x)) : s.events.filter((x) => x !== ev))} />
        ))}
        {err('events') && (
          <span class="field-error" role="alert">
            {err('events')}
          </span>
        )}
      </fieldset>
      <Checkbox label="Include the job response in payloads" checked={s.include_response} onChange={(v) => set('include_response', v)} name="include_response" />
      <Checkbox label="Allow private-network receivers and plain http" checked={s.allow_private_network} onChange={(v) => set('allow_private_network', v)} name="allow_private_network" />
      <HeadersField value={s.headers} onInput={(v) => set('headers', v)} error={err('headers')} hint='One "Header-Name: value" per line; values may be env.VAR. Stored values are shown redacted and kept when left as they are.' />
      <details class="advanced" open={NUMBER_FIELDS.some(([k]) => !!err(k))}>
        <summary>Retries and limits</summary>
        <div class="form-grid">
          {NUMBER_FIELDS.map(([k, label]) => (
            <TextField label={label} type="number" value={s.numbers[k]} onInput={(v) => set('numbers', { ...s.numbers, [k]: v })} name={k} error={err(k)} />
          ))}
        </div>
      </details>
      <ErrorBox error={props.error} />
      <FormButtons class="form-actions" busy={props.busy} label={props.existing ? 'Save changes' : 'Create endpoint'} onCancel={props.onCancel} />
    </form>
  );
}
