// "Test this rule": a sample request run through the gateway's routing engine (POST
// /api/routing/rules/test) over the live rules, plus the rule being edited when there is one. Shows
// the decision and the audit trail in the order the engine evaluated the rules.
import { useState } from 'preact/hooks';
import { ApiError, post } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { Banner, Button, ErrorBox, Field, Select, TextArea, TextInput } from '../../ui/components.tsx';
import { parseHeaderLines } from '../shared/headers.tsx';
import type { RoutingTestAnswer as TestAnswer, TrailStep } from '../../../../proxy/src/api/answers.ts';

export interface TesterOptions {
  providers: string[];
  virtualKeys: Array<{ id: string; name: string }>;
}

/** `name: value` lines → a header map; a line without a colon is an error naming it. */
function parseHeaders(text: string): Record<string, string> {
  const { headers, badLine } = parseHeaderLines(text);
  if (badLine !== undefined) throw new ApiError(400, `header line ${badLine} must be "name: value"`, 'request.headers');
  return headers;
}

function parseBody(text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new ApiError(400, `the body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`, 'request.body');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ApiError(400, 'the body must be a JSON object', 'request.body');
  return v as Record<string, unknown>;
}

export function RuleTester(props: { options: TesterOptions; draft?: () => Record<string, unknown> | undefined; title?: string }) {
  const [model, setModel] = useState('gpt-4o');
  const [provider, setProvider] = useState('');
  const [headers, setHeaders] = useState('');
  const [body, setBody] = useState('');
  const [vk, setVk] = useState('');
  const [answer, setAnswer] = useState<TestAnswer | undefined>(undefined);
  const run = useAction(async () => {
    const request: Record<string, unknown> = { model, headers: parseHeaders(headers) };
    if (provider) request.provider = provider;
    if (vk) request.virtual_key = vk;
    const b = parseBody(body);
    if (b) request.body = b;
    const rule = props.draft?.();
    const res = await post<TestAnswer>('/api/routing/rules/test', rule ? { request, rule } : { request });
    setAnswer(res);
    return res;
  });
  const submit = (e: Event) => {
    e.preventDefault();
    setAnswer(undefined);
    void run.run();
  };
  return (
    <section class="card rc-tester" aria-label={props.title ?? 'Test this rule'}>
      <h2>{props.title ?? 'Test this rule'}</h2>
      <form onSubmit={submit} class="stack">
        <div class="form-grid">
          <Field label="Sample model">
            <TextInput value={model} onInput={setModel} name="sample_model" required />
          </Field>
          <Field label="Sample provider">
            <Select value={provider} onChange={setProvider} options={[{ value: '', label: '(none: bare model)' }, ...props.options.providers]} />
          </Field>
          <Field label="Sample virtual key">
            <Select value={vk} onChange={setVk} options={[{ value: '', label: '(none)' }, ...props.options.virtualKeys.map((v) => ({ value: v.id, label: v.name }))]} />
          </Field>
        </div>
        <Field label="Sample headers" hint='One per line: "x-tier: cheap"'>
          <TextArea value={headers} onInput={setHeaders} name="sample_headers" rows={2} mono />
        </Field>
        <Field label="Sample body (JSON, optional)" hint="Its fallbacks apply when no rule gives its own.">
          <TextArea value={body} onInput={setBody} name="sample_body" rows={2} mono />
        </Field>
        <div class="row">
          <Button type="submit" kind="primary" disabled={run.busy || !model.trim()}>
            {run.busy ? 'Testing…' : 'Run test'}
          </Button>
        </div>
      </form>
      <ErrorBox error={run.error} />
      {answer && <TestResult answer={answer} />}
    </section>
  );
}

function trailOf(a: TestAnswer): { trail: TrailStep[]; error?: string } {
  const l = a.routing_engine_logs;
  return Array.isArray(l) ? { trail: l } : l;
}

export function TestResult(props: { answer: TestAnswer }) {
  const a = props.answer;
  const d = a.decision;
  const { trail, error } = trailOf(a);
  return (
    <div class="rc-result" data-testid="routing-test-result" aria-live="polite">
      <h3>Decision</h3>
      <dl class="kv">
        <dt>Matched</dt>
        <dd>{d.matched ? <span class="badge badge-ok">matched</span> : <span class="badge badge-muted">no rule matched</span>}</dd>
        {d.rule_name && (
          <>
            <dt>Rule</dt>
            <dd data-testid="matched-rule">
              {d.rule_name} <span class="muted">({d.scope === 'global' || !d.scope ? 'global' : `${d.scope} ${d.scope_id ?? ''}`})</span>
            </dd>
          </>
        )}
        <dt>Routed to</dt>
        <dd class="mono" data-testid="routed-to">
          {a.targets?.[0] ? `${a.targets[0].provider}/${a.targets[0].model}` : d.provider ? `${d.provider}/${d.model}` : d.model}
          {d.key_id ? ` (key ${d.key_id})` : ''}
        </dd>
        {a.targets && a.targets.length > 1 && (
          <>
            <dt>Then</dt>
            <dd class="mono">{a.targets.slice(1).map((t) => `${t.provider}/${t.model}`).join(' → ')}</dd>
          </>
        )}
        {a.virtual_key && (
          <>
            <dt>Virtual key</dt>
            <dd>{a.virtual_key.name}</dd>
          </>
        )}
        <dt>Engines</dt>
        <dd>{a.routing_engines_used.length ? a.routing_engines_used.join(', ') : 'none (the model as named)'}</dd>
      </dl>
      {a.note && <p class="muted">{a.note}</p>}
      {(d.error ?? error) && <Banner kind="warning">{d.error ?? error}</Banner>}
      {a.warnings.length > 0 && (
        <Banner kind="warning">
          Rules skipped when compiled:
          <ul>
            {a.warnings.map((w) => (
              <li>{w}</li>
            ))}
          </ul>
        </Banner>
      )}
      <h3>Audit trail</h3>
      {trail.length === 0 ? (
        <p class="muted">No rule applies to this request (none in its scopes).</p>
      ) : (
        <ol class="audit" data-testid="audit-trail">
          {trail.map((s) => (
            <li class={s.matched ? 'rc-step-matched' : undefined}>
              <strong>{s.ruleName}</strong> <span class="muted">({s.scope === 'global' ? 'global' : `${s.scope} ${s.scopeId ?? ''}`}{s.step > 0 ? `, chain step ${s.step}` : ''})</span>{' '}
              {s.matched ? (
                <span class="badge badge-ok">matched → {s.target ? `${s.target.provider}/${s.target.model}` : ''}</span>
              ) : s.skipped ? (
                <span class="badge badge-warn">skipped: {s.skipped.replace(/_/g, ' ')}</span>
              ) : (
                <span class="badge badge-muted">no match</span>
              )}
              {s.expression && <code class="rc-expr">{s.expression}</code>}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
