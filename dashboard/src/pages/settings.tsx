// Settings: the client settings PUT /api/config changes (GET /api/config/settings), grouped, each
// with its default, its current value, who set it and what it opens or costs. Only changed settings
// are sent; an emptied one goes back to its default (null). The gateway's 400 shows under the field
// it names. Settings from config.json are read-only here, and in Kubernetes mode the whole page is.
import { useState } from 'preact/hooks';
import { ApiError, get, put } from '../lib/api.ts';
import { useAction, useAsync } from '../lib/hooks.ts';
import { Banner, Button, ErrorBox, Field, Loading, PageHeader, ReadOnlyBanner, Select, TextArea, TextInput } from '../ui/components.tsx';
import { toNumber } from '../ui/form.tsx';
import type { PageProps } from './types.ts';
import type { ClientSettingView, ClientSettingsAnswer } from '../../../proxy/src/api/answers.ts';
import './settings.css';

/** A setting as the form holds it: '' is "the default". */
type Draft = Record<string, string>;

const shown = (v: unknown): string => (typeof v === 'boolean' ? (v ? 'on' : 'off') : Array.isArray(v) ? (v.length ? v.join(', ') : 'none') : String(v));

function textOf(s: ClientSettingView): string {
  if (s.value === undefined) return '';
  if (s.type === 'boolean') return s.value ? 'on' : 'off';
  if (s.type === 'list') return (s.value as unknown[]).join('\n');
  return String(s.value);
}

/** The value to send for a draft text; null puts the default back. */
function valueOf(s: ClientSettingView, text: string): unknown {
  if (text.trim() === '') return null;
  if (s.type === 'boolean') return text === 'on';
  if (s.type === 'list') return text.split('\n').map((l) => l.trim()).filter(Boolean);
  if (s.type === 'integer') return toNumber(text);
  return text;
}

/** `{a: {b: v}}` for the path `a.b`, merged into `into`. */
function setPath(into: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split('.');
  let node = into;
  for (const seg of segs.slice(0, -1)) node = (node[seg] ??= {}) as Record<string, unknown>;
  node[segs[segs.length - 1]] = value;
}

const OWNER: Record<ClientSettingView['owner'], string> = {
  default: 'the default',
  store: 'set here',
  file: 'set in the configuration file',
  environment: 'set by the environment',
  kubernetes: 'set by Kubernetes',
};

export function SettingsPage(_props: PageProps) {
  const answer = useAsync(() => get<ClientSettingsAnswer>('/api/config/settings'), []);
  // Kept here, above the form the reload after a save remounts: the confirmation stays in view.
  const [saved, setSaved] = useState<number | undefined>(undefined);
  if (answer.error && !answer.data) return (<><PageHeader title="Settings" /><ErrorBox error={answer.error} /></>);
  if (!answer.data) return (<><PageHeader title="Settings" /><Loading /></>);
  // Remounted when the stored settings change, so the form shows what was saved.
  return <SettingsForm key={JSON.stringify(answer.data.settings.map((s) => s.value))} answer={answer.data} reload={answer.reload} saved={saved} setSaved={setSaved} />;
}

function SettingsForm(props: { answer: ClientSettingsAnswer; reload: () => void; saved: number | undefined; setSaved: (n: number | undefined) => void }) {
  const { answer, saved, setSaved } = props;
  const initial = (): Draft => Object.fromEntries(answer.settings.map((s) => [s.name, textOf(s)]));
  const [draft, setDraft] = useState<Draft>(initial);
  const changed = answer.settings.filter((s) => draft[s.name] !== textOf(s));
  const save = useAction(async () => {
    const patch: Record<string, unknown> = {};
    for (const s of changed) setPath(patch, s.name, valueOf(s, draft[s.name]));
    await put('/api/config', { client_config: patch });
    setSaved(changed.length);
    props.reload();
  });
  const apiError = save.error instanceof ApiError ? save.error : undefined;
  /** The gateway names the field as `client_config.<path>` (a list item as `…[0]`). */
  const errorFor = (name: string): string | undefined => {
    const p = apiError?.param?.replace(/^client_config\./, '').replace(/\[\d+\]$/, '');
    return p === name ? apiError?.message : undefined;
  };
  const fieldless = save.error !== undefined && !answer.settings.some((s) => errorFor(s.name));
  const groups = [...new Set(answer.settings.map((s) => s.group))];

  return (
    <>
      <PageHeader title="Settings">
        {!answer.read_only && (
          // The form's own submit, placed in the header so the main action is in view on arrival.
          <button type="submit" form="settings-form" class="btn btn-primary" disabled={save.busy || changed.length === 0}>
            Save changes{changed.length ? ` (${changed.length})` : ''}
          </button>
        )}
      </PageHeader>
      {answer.read_only ? (
        <ReadOnlyBanner reason={answer.read_only_reason} />
      ) : (
        <p class="muted" data-testid="settings-store">
          The client settings of <code>config.json</code> that can change while the gateway runs.{' '}
          {answer.persistent ? `Changes are kept in the configuration store (${answer.store.location ?? answer.store.kind}) and survive a restart.` : 'Changes live in memory only: start the gateway with --app-dir (or redis) to keep them.'} Settings the
          configuration file sets are read-only here: edit the file.
        </p>
      )}
      {saved !== undefined && !save.error && <Banner kind="success">Saved {saved} setting{saved === 1 ? '' : 's'}.</Banner>}
      {fieldless && <ErrorBox error={save.error} />}
      <form
        id="settings-form"
        class="stack settings"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setSaved(undefined);
          void save.run();
        }}
      >
        {groups.map((g) => (
          <fieldset class="settings-group" key={g}>
            <legend>{g}</legend>
            {answer.settings
              .filter((s) => s.group === g)
              .map((s) => (
                <Setting key={s.name} s={s} text={draft[s.name]} onInput={(v) => setDraft({ ...draft, [s.name]: v })} readOnly={answer.read_only || s.owner === 'file' || s.owner === 'environment' || s.owner === 'kubernetes'} error={errorFor(s.name)} />
              ))}
          </fieldset>
        ))}
        {!answer.read_only && (
          <div class="row">
            <Button kind="primary" type="submit" disabled={save.busy || changed.length === 0}>
              Save changes
            </Button>
            <Button onClick={() => setDraft(initial())} disabled={changed.length === 0}>
              Discard
            </Button>
          </div>
        )}
      </form>
    </>
  );
}

function Setting(props: { s: ClientSettingView; text: string; onInput: (v: string) => void; readOnly: boolean; error: string | undefined }) {
  const { s } = props;
  const hint = `Default: ${shown(s.default)}. Now: ${s.value === undefined ? shown(s.default) : shown(s.value)} (${OWNER[s.owner]}${s.source ? ` ${s.source}` : ''}). ${s.effect}${s.applies === 'restart' ? ' Applies after a restart.' : ''}`;
  let control;
  if (s.type === 'boolean' || s.type === 'choice') {
    const options = s.type === 'boolean' ? ['on', 'off'] : (s.options ?? []);
    control = <Select name={s.name} value={props.text} onChange={props.onInput} disabled={props.readOnly} options={[{ value: '', label: `default (${shown(s.default)})` }, ...options]} />;
  } else if (s.type === 'list') {
    control = <TextArea name={s.name} rows={2} value={props.text} onInput={props.onInput} disabled={props.readOnly} invalid={!!props.error} mono />;
  } else {
    control = <TextInput name={s.name} type="text" value={props.text} placeholder={`default ${shown(s.default)}`} onInput={props.onInput} disabled={props.readOnly} invalid={!!props.error} />;
  }
  return (
    <div class="setting" data-setting={s.name}>
      <Field label={s.name} hint={s.type === 'list' ? `One per line. ${hint}` : hint} error={props.error}>
        {control}
      </Field>
    </div>
  );
}
