// Clearing cache entries: one entry by its id (cache_id in a response's cache_debug or the request
// log), or every entry written under a cache key (x-bf-cache-key).
import { useState } from 'preact/hooks';
import { del } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { Banner, Button, ErrorBox, Field, TextInput } from '../../ui/components.tsx';

function ClearForm(props: { label: string; hint: string; path: (v: string) => string; button: string; disabled: boolean }) {
  const [value, setValue] = useState('');
  const [done, setDone] = useState<string | undefined>(undefined);
  const clear = useAction(async () => {
    const v = value.trim();
    const res = await del<{ deleted: number }>(props.path(v));
    setDone(`Cleared ${res.deleted} ${res.deleted === 1 ? 'entry' : 'entries'} for ${v}.`);
  });
  return (
    <form
      class="stack"
      aria-label={props.button}
      onSubmit={(e) => {
        e.preventDefault();
        setDone(undefined);
        void clear.run();
      }}
    >
      <Field label={props.label} hint={props.hint}>
        <TextInput value={value} onInput={setValue} disabled={props.disabled} required />
      </Field>
      <div class="row">
        <Button type="submit" kind="danger" disabled={props.disabled || clear.busy || !value.trim()}>
          {props.button}
        </Button>
      </div>
      <ErrorBox error={clear.error} />
      {done && <Banner kind="success">{done}</Banner>}
    </form>
  );
}

export function ClearCache(props: { disabled: boolean }) {
  return (
    <div class="grid">
      <div class="card">
        <ClearForm label="Cache key" hint="Every entry written under this x-bf-cache-key." path={(k) => `/api/cache/clear-by-key/${encodeURIComponent(k)}`} button="Clear by key" disabled={props.disabled} />
      </div>
      <div class="card">
        <ClearForm label="Cache entry id" hint="The cache_id of a response's cache_debug." path={(id) => `/api/cache/clear/${encodeURIComponent(id)}`} button="Clear entry" disabled={props.disabled} />
      </div>
    </div>
  );
}
