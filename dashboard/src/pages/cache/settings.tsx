// The semantic_cache plugin's settings. What decides where entries live (embedding provider and
// model, dimension, namespace) is shown, not edited: changing it starts an empty namespace. The
// vector store is shown by type only; its settings (addresses, passwords) never reach the page.
import { useState } from 'preact/hooks';
import { ApiError, post, put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { Banner, Button, Checkbox, ErrorBox, Field, TextInput } from '../../ui/components.tsx';
import { SEMANTIC_CACHE } from './types.ts';
import { storeLine } from './store-line.ts';
import type { CacheStats, PluginView } from '../../../../proxy/src/api/answers.ts';

const str = (v: unknown, fallback: string): string => (v === undefined || v === null ? fallback : String(v));
const bool = (v: unknown, fallback: boolean): boolean => (typeof v === 'boolean' ? v : fallback);

export function CacheSettings(props: { plugin: PluginView | undefined; stats: CacheStats | undefined; statsFailed: boolean; readOnly: boolean; onSaved: () => void }) {
  const p = props.plugin;
  // Kept here: the form below is remounted when the stored config changes.
  const [saved, setSaved] = useState(false);
  if (!p) return <NoCachePlugin readOnly={props.readOnly} onSaved={props.onSaved} />;
  return (
    <>
      {/* Remount on a new stored config so the form shows what was saved. */}
      <SettingsForm key={JSON.stringify(p.config ?? {})} plugin={p} stats={props.stats} statsFailed={props.statsFailed} readOnly={props.readOnly || p.managed_by !== undefined} onSaved={props.onSaved} setSaved={setSaved} />
      {saved && <Banner kind="success">Settings saved: they apply from the next request.</Banner>}
    </>
  );
}

function SettingsForm(props: { plugin: PluginView; stats: CacheStats | undefined; statsFailed: boolean; readOnly: boolean; onSaved: () => void; setSaved: (v: boolean) => void }) {
  const c = props.plugin.config ?? {};
  const [ttl, setTtl] = useState(str(c.ttl, '5m'));
  const [threshold, setThreshold] = useState(str(c.threshold, '0.8'));
  const [history, setHistory] = useState(str(c.conversation_history_threshold, '3'));
  const [defaultKey, setDefaultKey] = useState(str(c.default_cache_key, ''));
  const [byModel, setByModel] = useState(bool(c.cache_by_model, true));
  const [byProvider, setByProvider] = useState(bool(c.cache_by_provider, true));
  const [excludeSystem, setExcludeSystem] = useState(bool(c.exclude_system_prompt, false));
  const setSaved = props.setSaved;
  const semantic = typeof c.provider === 'string';

  const save = useAction(async () => {
    const t = Number(threshold);
    if (semantic && !Number.isFinite(t)) throw new ApiError(400, 'threshold must be a number between 0 and 1', 'threshold');
    const h = Number(history);
    if (!Number.isInteger(h)) throw new ApiError(400, 'conversation history threshold must be a whole number', 'conversation_history_threshold');
    // A number of seconds is sent as a number: the schema takes both forms.
    const ttlValue: string | number = /^\d+$/.test(ttl.trim()) ? Number(ttl.trim()) : ttl.trim();
    // The plugin's config is replaced whole; masked values sent back are kept as stored by the gateway.
    const config = { ...c, ttl: ttlValue, ...(semantic && { threshold: t }), conversation_history_threshold: h, default_cache_key: defaultKey, cache_by_model: byModel, cache_by_provider: byProvider, exclude_system_prompt: excludeSystem };
    await put(`/api/plugins/${SEMANTIC_CACHE}`, { config });
    setSaved(true);
    props.onSaved();
  });

  return (
    <form
      class="stack rc-form"
      aria-label="Cache settings"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        void save.run();
      }}
    >
      <dl class="kv">
        <dt>Mode</dt>
        <dd>{semantic ? `semantic (${String(c.provider)}/${str(c.embedding_model, '?')}, dimension ${str(c.dimension, '?')}) and direct` : 'direct only (exact match)'}</dd>
        <dt>Namespace</dt>
        <dd class="mono">{str(c.vector_store_namespace, 'BifrostSemanticCachePlugin')}</dd>
        <dt>Vector store</dt>
        <dd data-testid="vector-store">
          {storeLine(props.stats, props.statsFailed)}
          <span class="muted"> (set in config.json; read at start)</span>
        </dd>
      </dl>
      <div class="form-grid">
        <Field label="TTL" hint="A duration (30s, 5m, 1h) or seconds.">
          <TextInput value={ttl} onInput={setTtl} name="ttl" disabled={props.readOnly} />
        </Field>
        {semantic && (
          <Field label="Similarity threshold" hint="0 to 1: the lowest similarity that counts as a hit.">
            <TextInput type="number" value={threshold} onInput={setThreshold} name="threshold" disabled={props.readOnly} />
          </Field>
        )}
        <Field label="Conversation history threshold" hint="Longer conversations are not cached.">
          <TextInput type="number" value={history} onInput={setHistory} name="conversation_history_threshold" disabled={props.readOnly} />
        </Field>
        <Field label="Default cache key" hint="For requests without x-bf-cache-key; empty: not cached.">
          <TextInput value={defaultKey} onInput={setDefaultKey} name="default_cache_key" disabled={props.readOnly} />
        </Field>
      </div>
      <div class="row">
        <Checkbox label="Cache by model" checked={byModel} onChange={setByModel} disabled={props.readOnly} />
        <Checkbox label="Cache by provider" checked={byProvider} onChange={setByProvider} disabled={props.readOnly} />
        <Checkbox label="Exclude system prompt" checked={excludeSystem} onChange={setExcludeSystem} disabled={props.readOnly} />
      </div>
      <ErrorBox error={save.error} />
      {!props.readOnly && (
        <div class="row">
          <Button type="submit" kind="primary" disabled={save.busy}>
            {save.busy ? 'Saving…' : 'Save settings'}
          </Button>
        </div>
      )}
    </form>
  );
}

/** No semantic_cache entry yet: one click adds a direct-only cache (exact repeats), disabled until switched on. */
function NoCachePlugin(props: { readOnly: boolean; onSaved: () => void }) {
  const add = useAction(async () => {
    await post('/api/plugins', { name: SEMANTIC_CACHE, enabled: false, config: { dimension: 1, ttl: '5m' } });
    props.onSaved();
  });
  return (
    <div class="stack">
      <p class="muted">The response cache (semantic_cache plugin) is not configured.</p>
      <ErrorBox error={add.error} />
      {!props.readOnly && (
        <div class="row">
          <Button onClick={() => void add.run()} disabled={add.busy}>
            Add a direct-only cache
          </Button>
        </div>
      )}
    </div>
  );
}
