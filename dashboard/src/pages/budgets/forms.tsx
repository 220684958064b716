// Create / edit one budget or rate limit record (the budgets page; records usually get their limits
// inline from the virtual key, team or customer forms).
import { useState } from 'preact/hooks';
import { Checkbox } from '../../ui/components.tsx';
import { EditForm, TextField, numberText, toNumber } from '../../ui/form.tsx';
import { post, put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { fieldError } from './model.ts';
import type { Budget, RateLimit } from '../../../../proxy/src/api/answers.ts';

const ID_HINT = 'optional; generated when empty';

export function BudgetForm(props: { budget: Budget | undefined; onSaved: () => void; onCancel: () => void }) {
  const b = props.budget;
  const [id, setId] = useState(b?.id ?? '');
  const [max, setMax] = useState(numberText(b?.max_limit));
  const [reset, setReset] = useState(b?.reset_duration ?? '1M');
  const [calendar, setCalendar] = useState(b?.calendar_aligned ?? false);
  const save = useAction(() => {
    const body = { max_limit: toNumber(max), reset_duration: reset, calendar_aligned: calendar };
    return b ? put(`/api/governance/budgets/${encodeURIComponent(b.id)}`, body) : post('/api/governance/budgets', { ...(id.trim() && { id: id.trim() }), ...body });
  });
  const err = (p: string) => fieldError(save.error, p);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={b ? 'Save' : 'Create budget'} onCancel={props.onCancel}>
      <div class="form-grid">
        {!b && <TextField label="Id" hint={ID_HINT} value={id} onInput={setId} name="id" error={err('id')} />}
        <TextField label="Max (USD)" value={max} onInput={setMax} name="max_limit" error={err('max_limit')} />
        <TextField label="Resets every" hint="30s, 5m, 1h, 1d, 1w, 1M, 1Y" value={reset} onInput={setReset} name="reset_duration" error={err('reset_duration')} />
      </div>
      <Checkbox label="Calendar aligned" checked={calendar} onChange={setCalendar} name="calendar_aligned" />
      {err('calendar_aligned') && (
        <span class="field-error" role="alert">
          {err('calendar_aligned')}
        </span>
      )}
    </EditForm>
  );
}

export function RateLimitForm(props: { rateLimit: RateLimit | undefined; onSaved: () => void; onCancel: () => void }) {
  const r = props.rateLimit;
  const [id, setId] = useState(r?.id ?? '');
  const [tokenMax, setTokenMax] = useState(numberText(r?.token_max_limit));
  const [tokenReset, setTokenReset] = useState(r?.token_reset_duration ?? '1d');
  const [requestMax, setRequestMax] = useState(numberText(r?.request_max_limit));
  const [requestReset, setRequestReset] = useState(r?.request_reset_duration ?? '1h');
  const save = useAction(() => {
    // A cleared maximum removes that limit (null deletes the field in the merge).
    const body = {
      token_max_limit: tokenMax.trim() ? toNumber(tokenMax) : null,
      token_reset_duration: tokenMax.trim() ? tokenReset : null,
      request_max_limit: requestMax.trim() ? toNumber(requestMax) : null,
      request_reset_duration: requestMax.trim() ? requestReset : null,
    };
    if (r) return put(`/api/governance/rate-limits/${encodeURIComponent(r.id)}`, body);
    const created: Record<string, unknown> = { ...(id.trim() && { id: id.trim() }) };
    for (const [k, v] of Object.entries(body)) if (v !== null) created[k] = v;
    return post('/api/governance/rate-limits', created);
  });
  const err = (p: string) => fieldError(save.error, p);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={r ? 'Save' : 'Create rate limit'} onCancel={props.onCancel}>
      <div class="form-grid">
        {!r && <TextField label="Id" hint={ID_HINT} value={id} onInput={setId} name="id" error={err('id')} />}
        <TextField label="Max tokens" hint="empty: no token limit" value={tokenMax} onInput={setTokenMax} name="token_max_limit" error={err('token_max_limit')} />
        <TextField label="Tokens reset every" value={tokenReset} onInput={setTokenReset} name="token_reset_duration" error={err('token_reset_duration')} />
        <TextField label="Max requests" hint="empty: no request limit" value={requestMax} onInput={setRequestMax} name="request_max_limit" error={err('request_max_limit')} />
        <TextField label="Requests reset every" value={requestReset} onInput={setRequestReset} name="request_reset_duration" error={err('request_reset_duration')} />
      </div>
    </EditForm>
  );
}
