// The CEL expression field, checked as the person types: a debounced call to the gateway's own
// compiler (POST /api/routing/rules/validate), so what the field accepts is what a save accepts.
import { useEffect, useRef, useState } from 'preact/hooks';
import { post } from '../../lib/api.ts';
import { Field, TextArea } from '../../ui/components.tsx';
import type { CelValidation as CelCheck } from '../../../../proxy/src/api/answers.ts';

const DEBOUNCE_MS = 300;

export type CelState = { status: 'checking' } | { status: 'valid' } | { status: 'invalid'; message: string; column?: number } | { status: 'unknown'; message: string };

export function validateCel(expression: string): Promise<CelCheck> {
  return post<CelCheck>('/api/routing/rules/validate', { cel_expression: expression });
}

/** The latest expression's verdict; answers to older keystrokes are dropped. */
export function useCelCheck(expression: string): CelState {
  const [state, setState] = useState<CelState>({ status: 'checking' });
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setState({ status: 'checking' });
    const timer = setTimeout(() => {
      validateCel(expression).then(
        (r) => mine === seq.current && setState(r.valid ? { status: 'valid' } : { status: 'invalid', message: r.error?.message ?? 'invalid expression', column: r.error?.position?.column }),
        (e: unknown) => mine === seq.current && setState({ status: 'unknown', message: `could not check the expression: ${e instanceof Error ? e.message : String(e)}` }),
      );
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [expression]);
  return state;
}

export function CelField(props: { value: string; onInput: (v: string) => void; state: CelState; disabled?: boolean }) {
  const s = props.state;
  const error = s.status === 'invalid' ? `${s.message}${s.column ? ` — column ${s.column}` : ''}` : s.status === 'unknown' ? s.message : undefined;
  const hint =
    s.status === 'checking'
      ? 'Checking…'
      : s.status === 'valid'
        ? props.value.trim() === ''
          ? 'Valid: an empty expression matches every request.'
          : 'Valid CEL.'
        : 'Variables: model, provider, request_type, headers["name"], params["name"], virtual_key_id/_name, team_id/_name, customer_id/_name, budget_used, tokens_used, request, complexity_tier.';
  return (
    <Field label="CEL expression" error={error} hint={hint}>
      <TextArea value={props.value} onInput={props.onInput} name="cel_expression" rows={3} mono invalid={s.status === 'invalid'} disabled={props.disabled} />
    </Field>
  );
}
