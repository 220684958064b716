// Playground: a chat completions or responses request to a model, as a chosen virtual key, run by
// the gateway (POST /api/playground: the key's value never reaches the page), streamed into the
// page, then the answer's latency, tokens, cost, cache and routing decision from its log record.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PageProps } from './types.ts';
import './playground.css';
import { Button, ErrorBox, Field, Loading, PageHeader, Select, TextArea, TextInput } from '../ui/components.tsx';
import { get, query } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { postStream } from '../lib/sse.ts';
import { answerText, readEvent, type StreamState } from './playground/stream.ts';
import { AnswerSummary } from './playground/summary.tsx';
import type { PlaygroundAnswer, PlaygroundModels, VirtualKeyView } from '../../../proxy/src/api/answers.ts';

type Api = 'chat' | 'responses';

const API_OPTIONS = [
  { value: 'chat', label: 'Chat completions (/v1/chat/completions)' },
  { value: 'responses', label: 'Responses (/v1/responses)' },
];

function requestBody(api: Api, model: string, system: string, prompt: string, stream: boolean): Record<string, unknown> {
  if (api === 'responses') return { model, input: prompt, ...(system.trim() && { instructions: system }), stream };
  const messages = [...(system.trim() ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }];
  return { model, messages, stream, ...(stream && { stream_options: { include_usage: true } }) };
}

export function PlaygroundPage({ params }: PageProps) {
  const keys = useAsync(() => get<{ virtual_keys: VirtualKeyView[] }>('/api/governance/virtual-keys'), []);
  const [vk, setVk] = useState(params.get('virtual_key') ?? '');
  const list = keys.data?.virtual_keys.filter((k) => k.is_active !== false) ?? [];
  // The first key is chosen until the user picks one.
  const chosen = vk || list[0]?.id || '';
  const models = useAsync(() => get<PlaygroundModels>(`/api/playground/models${query({ virtual_key_id: chosen })}`), [chosen]);
  const [api, setApi] = useState<Api>('chat');
  const [model, setModel] = useState(params.get('model') ?? '');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('Say hello in five words.');
  const [stream, setStream] = useState(true);
  const [state, setState] = useState<StreamState | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => abort.current?.abort(), []);
  const firstModel = models.data?.models[0] ?? '';
  const effectiveModel = model || firstModel;

  const send = async (e: Event) => {
    e.preventDefault();
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setError(undefined);
    setBusy(true);
    let current: StreamState = { text: '', events: 0 };
    setState(current);
    try {
      const body = { ...(chosen && { virtual_key_id: chosen }), operation: api, request: requestBody(api, effectiveModel, system, prompt, stream) };
      const whole = (await postStream('/api/playground', body, (ev) => setState((current = readEvent(current, ev))), controller.signal)) as PlaygroundAnswer | undefined;
      if (whole) setState({ text: answerText(whole.response), events: 1, summary: whole.summary });
    } catch (err) {
      if (!controller.signal.aborted) setError(err);
      setState(undefined);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="stack pg">
      <PageHeader title="Playground" />
      <p class="muted">Sends a request through the gateway as the chosen virtual key: its allowed models, routing rules, budgets and rate limits apply, it is charged and logged like any other. The key's value stays on the gateway.</p>
      <ErrorBox error={keys.error} />
      {keys.loading && !keys.data && <Loading />}
      <form class="card stack" onSubmit={send} aria-label="Request">
        <div class="form-grid pg-grid">
          <Field label="Virtual key" hint={list.length ? undefined : 'No virtual keys: the request runs without one.'}>
            <Select value={chosen} onChange={(v) => (setVk(v), setModel(''))} options={list.length ? list.map((k) => ({ value: k.id, label: k.name })) : [{ value: '', label: '(no key)' }]} name="virtual_key" />
          </Field>
          <Field label="API">
            <Select value={api} onChange={(v) => setApi(v as Api)} options={API_OPTIONS} name="api" />
          </Field>
          <Field label="Model" hint={models.data ? `${models.data.models.length} models this key allows${models.data.any ? '; others its providers list may be typed' : ''}` : undefined}>
            <input class="input" list="pg-models" name="model" value={effectiveModel} placeholder="provider/model" onInput={(ev) => setModel((ev.currentTarget as HTMLInputElement).value)} />
          </Field>
        </div>
        <datalist id="pg-models">
          {(models.data?.models ?? []).map((m) => (
            <option value={m} />
          ))}
        </datalist>
        <Field label="System prompt (optional)">
          <TextInput value={system} onInput={setSystem} name="system" />
        </Field>
        <Field label="Message">
          <TextArea value={prompt} onInput={setPrompt} name="prompt" rows={3} />
        </Field>
        <div class="row">
          <label class="checkbox">
            <input type="checkbox" checked={stream} onChange={(ev) => setStream((ev.currentTarget as HTMLInputElement).checked)} name="stream" />
            <span>Stream the answer</span>
          </label>
          <Button type="submit" kind="primary" disabled={busy || !effectiveModel.trim() || !prompt.trim()}>
            {busy ? 'Sending…' : 'Send'}
          </Button>
          {busy && <Button onClick={() => abort.current?.abort()}>Stop</Button>}
        </div>
      </form>
      <ErrorBox error={error} />
      {state && (
        <section class="card" aria-label="Answer" aria-busy={busy ? 'true' : 'false'}>
          <h2>Answer</h2>
          <p class="pg-answer" data-testid="answer-text">
            {state.text || (busy ? '…' : '')}
          </p>
          {state.error && <ErrorBox error={new Error(state.error)} />}
        </section>
      )}
      {state?.summary && <AnswerSummary summary={state.summary} />}
    </section>
  );
}
