// Create or edit one routing rule. The CEL field is checked as it is typed and a save is refused
// while it does not compile; the gateway checks the whole rule again on save and its error (with
// the field) is shown. Fields the form does not edit (query-builder trees, pinned fallbacks) are
// left as stored: an update sends only what the form changed.
import { useState } from 'preact/hooks';
import { ApiError, post, put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { Button, Checkbox, ErrorBox, Field, Select, TextInput } from '../../ui/components.tsx';
import { CelField, useCelCheck, validateCel } from './cel-field.tsx';
import { RuleTester, type TesterOptions } from './tester.tsx';
import { fallbackText, SCOPES } from './types.ts';
import type { RoutingScope as Scope, RoutingTarget as Target, RuleView as Rule } from '../../../../proxy/src/api/answers.ts';

export interface ScopeChoices {
  customer: Array<{ id: string; name: string }>;
  team: Array<{ id: string; name: string }>;
  virtual_key: Array<{ id: string; name: string }>;
}

interface TargetRow {
  provider: string;
  model: string;
  weight: string;
  key_id?: string;
}

const toRow = (t: Target): TargetRow => ({ provider: t.provider ?? '', model: t.model ?? '', weight: String(t.weight), ...(t.key_id && { key_id: t.key_id }) });

function fromRow(r: TargetRow, i: number): Target {
  const weight = Number(r.weight);
  if (!r.weight.trim() || !Number.isFinite(weight)) throw new ApiError(400, `target ${i + 1}: weight must be a number between 0 and 1`, `targets[${i}].weight`);
  return { ...(r.provider && { provider: r.provider }), ...(r.model.trim() && { model: r.model.trim() }), ...(r.key_id && { key_id: r.key_id }), weight };
}

export function RuleForm(props: { rule?: Rule; options: TesterOptions; scopes: ScopeChoices; onSaved: (rule: Rule) => void; onCancel: () => void }) {
  const r = props.rule;
  const [name, setName] = useState(r?.name ?? '');
  const [description, setDescription] = useState(r?.description ?? '');
  const [scope, setScope] = useState<Scope>(r?.scope ?? 'global');
  const [scopeId, setScopeId] = useState(r?.scope_id ?? '');
  const [priority, setPriority] = useState(String(r?.priority ?? 0));
  const [enabled, setEnabled] = useState(r?.enabled !== false);
  const [chain, setChain] = useState(r?.chain_rule === true);
  const [cel, setCel] = useState(r?.cel_expression ?? '');
  const [targets, setTargets] = useState<TargetRow[]>(r ? r.targets.map(toRow) : [{ provider: props.options.providers[0] ?? '', model: '', weight: '1' }]);
  const [fallbacks, setFallbacks] = useState((r?.fallbacks ?? []).map(fallbackText).join(', '));
  const [fallbacksTouched, setFallbacksTouched] = useState(false);
  const celState = useCelCheck(cel);

  /** The rule as the form says it (throws an ApiError naming a field the form can tell is wrong). */
  const build = (): Record<string, unknown> => {
    const p = Number(priority);
    if (!Number.isFinite(p)) throw new ApiError(400, 'priority must be a number', 'priority');
    const body: Record<string, unknown> = {
      name: name.trim(),
      description,
      scope,
      scope_id: scope === 'global' ? null : scopeId || null,
      priority: p,
      enabled,
      chain_rule: chain,
      cel_expression: cel,
      targets: targets.map(fromRow),
    };
    if (!r || fallbacksTouched) {
      body.fallbacks = fallbacks
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    }
    return body;
  };

  const save = useAction(async () => {
    // The save is refused here while the expression does not compile, whatever the debounce is doing.
    const check = await validateCel(cel);
    if (!check.valid) throw new ApiError(400, check.error?.message ?? 'the CEL expression does not compile', 'cel_expression');
    const body = build();
    const res = r ? await put<{ rule: Rule }>(`/api/routing/rules/${encodeURIComponent(r.id)}`, body) : await post<{ rule: Rule }>('/api/routing/rules', body);
    props.onSaved(res.rule);
    return res.rule;
  });

  const draft = (): Record<string, unknown> | undefined => {
    try {
      return { ...(r && { id: r.id }), ...build(), ...(r && !fallbacksTouched && r.fallbacks && { fallbacks: r.fallbacks }) };
    } catch {
      return undefined;
    }
  };

  const setTarget = (i: number, patch: Partial<TargetRow>) => setTargets(targets.map((t, j) => (j === i ? { ...t, ...patch } : t)));
  const choices = scope === 'global' ? [] : props.scopes[scope];
  const celInvalid = celState.status === 'invalid';
  const providerOptions = [{ value: '', label: '(keep the request’s)' }, ...props.options.providers];

  return (
    <div class="stack rc-editor">
      <form
        class="stack"
        aria-label={r ? `Edit rule ${r.name}` : 'New routing rule'}
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <div class="form-grid">
          <Field label="Name">
            <TextInput value={name} onInput={setName} name="name" required />
          </Field>
          <Field label="Priority" hint="Lower runs first within a scope.">
            <TextInput type="number" value={priority} onInput={setPriority} name="priority" />
          </Field>
          <Field label="Scope">
            <Select value={scope} onChange={(v) => (setScope(v as Scope), setScopeId(''))} options={SCOPES} />
          </Field>
          {scope !== 'global' && (
            <Field label="Applies to">
              <Select value={scopeId} onChange={setScopeId} options={[{ value: '', label: '(choose)' }, ...choices.map((c) => ({ value: c.id, label: `${c.name} (${c.id})` }))]} />
            </Field>
          )}
        </div>
        <Field label="Description">
          <TextInput value={description} onInput={setDescription} name="description" />
        </Field>
        <CelField value={cel} onInput={(v) => (setCel(v), save.error instanceof ApiError && save.error.param === 'cel_expression' && save.clear())} state={celState} />
        <fieldset class="rc-fieldset">
          <legend>Targets (weights sum to 1)</legend>
          {targets.map((t, i) => (
            <div class="form-grid rc-target">
              <Field label={`Target ${i + 1} provider`}>
                <Select value={t.provider} onChange={(v) => setTarget(i, { provider: v })} options={providerOptions} />
              </Field>
              <Field label={`Target ${i + 1} model`} hint="Empty keeps the request’s model.">
                <TextInput value={t.model} onInput={(v) => setTarget(i, { model: v })} />
              </Field>
              <Field label={`Target ${i + 1} weight`}>
                <TextInput type="number" value={t.weight} onInput={(v) => setTarget(i, { weight: v })} />
              </Field>
              {targets.length > 1 && (
                <Button onClick={() => setTargets(targets.filter((_, j) => j !== i))} label={`Remove target ${i + 1}`}>
                  Remove
                </Button>
              )}
            </div>
          ))}
          <div class="row">
            <Button onClick={() => setTargets([...targets, { provider: '', model: '', weight: '0' }])}>Add target</Button>
          </div>
        </fieldset>
        <Field label="Fallbacks" hint='Comma-separated "provider/model"; empty keeps the request’s own.'>
          <TextInput value={fallbacks} onInput={(v) => (setFallbacks(v), setFallbacksTouched(true))} name="fallbacks" />
        </Field>
        <div class="row">
          <Checkbox label="Enabled" checked={enabled} onChange={setEnabled} />
          <Checkbox label="Chain (evaluate the rules again from the new target)" checked={chain} onChange={setChain} />
        </div>
        <ErrorBox error={save.error} />
        <div class="row">
          <Button type="submit" kind="primary" disabled={save.busy || celInvalid || !name.trim()}>
            {save.busy ? 'Saving…' : r ? 'Save rule' : 'Create rule'}
          </Button>
          <Button onClick={props.onCancel}>Cancel</Button>
          {celInvalid && <span class="field-error">Fix the CEL expression to save.</span>}
        </div>
      </form>
      <RuleTester options={props.options} draft={draft} title="Test this rule" />
    </div>
  );
}
