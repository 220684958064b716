// A record's budget and rate limit: usage bars against the limits (from /api/governance/usage) and
// the form fields that edit them inline (the API's `budget: {...}` / `rate_limit: {...}` bodies).
import { Checkbox, UsageBar } from '../../ui/components.tsx';
import { TextField, numberText, toNumber } from '../../ui/form.tsx';
import { formatCost, formatNumber, formatTime } from '../../lib/format.ts';
import { fieldError, type UsageIndex } from './model.ts';
import type { Limited } from '../../../../proxy/src/api/answers.ts';

/** Usage bars of whatever limits the record has; a dash when it has none. */
export function LimitBars(props: { record: Limited; usage: UsageIndex | undefined; what?: string }) {
  const { record, usage } = props;
  const of = props.what ? ` of ${props.what}` : '';
  const b = record.budget_id ? usage?.budgets.get(record.budget_id) : undefined;
  const r = record.rate_limit_id ? usage?.rateLimits.get(record.rate_limit_id) : undefined;
  if (!b && !r) return <span class="muted">{record.budget_id || record.rate_limit_id ? '…' : 'No limits'}</span>;
  return (
    <div class="limit-bars">
      {b && <UsageBar label={`Budget${of} (${b.reset_duration})`} used={b.current_usage} limit={b.max_limit} format={formatCost} />}
      {r?.token_max_limit !== undefined && r.token_current_usage !== undefined && (
        <UsageBar label={`Tokens${of} (${r.token_reset_duration ?? ''})`} used={r.token_current_usage} limit={r.token_max_limit} format={formatNumber} />
      )}
      {r?.request_max_limit !== undefined && r.request_current_usage !== undefined && (
        <UsageBar label={`Requests${of} (${r.request_reset_duration ?? ''})`} used={r.request_current_usage} limit={r.request_max_limit} format={formatNumber} />
      )}
      {b && <span class="field-hint">Budget resets {formatTime(b.resets_at)} UTC</span>}
    </div>
  );
}

export interface LimitsDraft {
  budgetOn: boolean;
  maxLimit: string;
  reset: string;
  calendar: boolean;
  rateOn: boolean;
  tokenMax: string;
  tokenReset: string;
  requestMax: string;
  requestReset: string;
}

export function limitsDraft(r: Limited | undefined): LimitsDraft {
  const b = r?.budget;
  const rl = r?.rate_limit;
  return {
    budgetOn: !!b,
    maxLimit: numberText(b?.max_limit),
    reset: b?.reset_duration ?? '1M',
    calendar: b?.calendar_aligned ?? false,
    rateOn: !!rl,
    tokenMax: numberText(rl?.token_max_limit),
    tokenReset: rl?.token_reset_duration ?? '1d',
    requestMax: numberText(rl?.request_max_limit),
    requestReset: rl?.request_reset_duration ?? '1h',
  };
}

/** The inline `budget` / `rate_limit` fields of a write body; null detaches what the record had. */
export function limitsBody(d: LimitsDraft, had: Limited | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (d.budgetOn) body.budget = { max_limit: toNumber(d.maxLimit), reset_duration: d.reset, ...(d.calendar && { calendar_aligned: true }) };
  else if (had?.budget_id) body.budget = null;
  if (d.rateOn) {
    body.rate_limit = {
      ...(d.tokenMax.trim() !== '' && { token_max_limit: toNumber(d.tokenMax), token_reset_duration: d.tokenReset }),
      ...(d.requestMax.trim() !== '' && { request_max_limit: toNumber(d.requestMax), request_reset_duration: d.requestReset }),
    };
  } else if (had?.rate_limit_id) body.rate_limit = null;
  return body;
}

/** Budget and rate-limit fields; `prefix` is where they sit in the body (`provider_configs[0]`). */
export function LimitsFields(props: { draft: LimitsDraft; onChange: (d: LimitsDraft) => void; error: unknown; prefix?: string; disabled?: boolean; legend?: string; labelSuffix?: string }) {
  const { draft: d, onChange, error } = props;
  // Several sets in one form (a virtual key's and each provider config's) need distinct labels.
  const l = (text: string) => (props.labelSuffix ? `${text} ${props.labelSuffix}` : text);
  const at = (f: string) => (props.prefix ? `${props.prefix}.${f}` : f);
  const set = (patch: Partial<LimitsDraft>) => onChange({ ...d, ...patch });
  const err = (...fields: string[]) => fieldError(error, ...fields.map(at));
  return (
    <fieldset class="limits-fields gov-fieldset">
      <legend>{props.legend ?? 'Limits'}</legend>
      <Checkbox label={l('Budget (USD)')} checked={d.budgetOn} onChange={(v) => set({ budgetOn: v })} disabled={props.disabled} />
      {d.budgetOn && (
        <div class="form-grid">
          <TextField label={l('Budget max (USD)')} value={d.maxLimit} onInput={(v) => set({ maxLimit: v })} name="max_limit" disabled={props.disabled} error={err('budget.max_limit')} />
          <TextField label={l('Budget resets every')} hint="30s, 5m, 1h, 1d, 1w, 1M, 1Y" value={d.reset} onInput={(v) => set({ reset: v })} name="reset_duration" disabled={props.disabled} error={err('budget.reset_duration')} />
          <div>
            <Checkbox label={l('Calendar aligned')} checked={d.calendar} onChange={(v) => set({ calendar: v })} disabled={props.disabled} />
            {err('budget.calendar_aligned') && (
              <span class="field-error" role="alert">
                {err('budget.calendar_aligned')}
              </span>
            )}
          </div>
        </div>
      )}
      <Checkbox label={l('Rate limit')} checked={d.rateOn} onChange={(v) => set({ rateOn: v })} disabled={props.disabled} />
      {d.rateOn && (
        <div class="form-grid">
          <TextField label={l('Max tokens')} hint="empty: no token limit" value={d.tokenMax} onInput={(v) => set({ tokenMax: v })} name="token_max_limit" disabled={props.disabled} error={err('rate_limit.token_max_limit')} />
          <TextField label={l('Tokens reset every')} value={d.tokenReset} onInput={(v) => set({ tokenReset: v })} name="token_reset_duration" disabled={props.disabled} error={err('rate_limit.token_reset_duration')} />
          <TextField label={l('Max requests')} hint="empty: no request limit" value={d.requestMax} onInput={(v) => set({ requestMax: v })} name="request_max_limit" disabled={props.disabled} error={err('rate_limit.request_max_limit')} />
          <TextField label={l('Requests reset every')} value={d.requestReset} onInput={(v) => set({ requestReset: v })} name="request_reset_duration" disabled={props.disabled} error={err('rate_limit.request_reset_duration')} />
        </div>
      )}
    </fieldset>
  );
}
