// The dashboard's building blocks. Every control has a visible or accessible label, and every
// write control can be disabled at once for read-only (Kubernetes) mode.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../lib/api.ts';

export function Button(props: { onClick?: () => void; kind?: 'primary' | 'danger' | 'default'; disabled?: boolean; type?: 'button' | 'submit'; label?: string; children: ComponentChildren }) {
  return (
    <button type={props.type ?? 'button'} class={`btn btn-${props.kind ?? 'default'}`} onClick={props.onClick} disabled={props.disabled} aria-label={props.label}>
      {props.children}
    </button>
  );
}

/**
 * A labelled form control. The label wraps only the name and the control, so the accessible name is
 * the label alone; the hint and the error (role=alert, announced when it appears) sit beside it.
 */
export function Field(props: { label: string; error?: string | undefined; hint?: string; children: ComponentChildren }) {
  return (
    <div class={`field${props.error ? ' field-invalid' : ''}`}>
      <label class="field-main">
        <span class="field-label">{props.label}</span>
        {props.children}
      </label>
      {props.hint && <span class="field-hint">{props.hint}</span>}
      {props.error && (
        <span class="field-error" role="alert">
          {props.error}
        </span>
      )}
    </div>
  );
}

export function TextInput(props: { value: string; onInput: (v: string) => void; name?: string; type?: 'text' | 'password' | 'number' | 'search' | 'url' | 'email' | 'datetime-local'; placeholder?: string; disabled?: boolean; required?: boolean; invalid?: boolean; /** The browser's autofill hint (username, current-password, off). */ autoComplete?: string }) {
  return (
    <input
      class="input"
      // One component for every text-like type; Preact's typings discriminate each.
      type={(props.type ?? 'text') as 'text'}
      name={props.name}
      value={props.value}
      placeholder={props.placeholder}
      disabled={props.disabled}
      required={props.required}
      autoComplete={props.autoComplete}
      aria-invalid={props.invalid ? 'true' : undefined}
      onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
    />
  );
}

export function TextArea(props: { value: string; onInput: (v: string) => void; name?: string; rows?: number; disabled?: boolean; invalid?: boolean; mono?: boolean }) {
  return (
    <textarea
      class={`input${props.mono ? ' mono' : ''}`}
      name={props.name}
      rows={props.rows ?? 4}
      value={props.value}
      disabled={props.disabled}
      aria-invalid={props.invalid ? 'true' : undefined}
      onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
    />
  );
}

export function Select(props: { value: string; onChange: (v: string) => void; options: ReadonlyArray<string | { value: string; label: string }>; name?: string; disabled?: boolean }) {
  return (
    <select class="input" name={props.name} value={props.value} disabled={props.disabled} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}>
      {props.options.map((o) => (typeof o === 'string' ? <option value={o}>{o}</option> : <option value={o.value}>{o.label}</option>))}
    </select>
  );
}

export function Checkbox(props: { label: string; checked: boolean; onChange: (v: boolean) => void; disabled?: boolean; name?: string }) {
  return (
    <label class="checkbox">
      <input type="checkbox" name={props.name} checked={props.checked} disabled={props.disabled} onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)} />
      <span>{props.label}</span>
    </label>
  );
}

export interface Column<T> {
  label: string;
  /** Cell content; defaults to the row's property of the same name as `key`. */
  render?: (row: T) => ComponentChildren;
  key?: keyof T & string;
  numeric?: boolean;
}

export function Table<T>(props: {
  caption: string;
  columns: ReadonlyArray<Column<T>>;
  rows: readonly T[];
  empty?: string;
  rowKey?: (row: T, i: number) => string;
  onRowClick?: (row: T) => void;
  /** Extra class of a row (e.g. 'fresh' for one just added). */ rowClass?: (row: T) => string | undefined;
  /** At phone width each row becomes a card of label: value lines, so no column or action is pushed off-screen (default; false keeps the table, scrolling in its box). */
  cards?: boolean;
  /** Tighter rows, so a screen holds more of a long list. */
  dense?: boolean;
}) {
  const cards = props.cards ?? true;
  return (
    // Focusable and named: a table wider than its box scrolls there, and the keyboard must reach it too.
    <div class={`table-wrap${cards ? ' table-wrap-cards' : ''}`} tabIndex={0} role="region" aria-label={props.caption}>
      <table class={['table', cards ? 'table-cards' : '', props.dense ? 'table-dense' : ''].filter(Boolean).join(' ')}>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" class={c.numeric ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 ? (
            <tr>
              <td colSpan={props.columns.length} class="empty">
                {props.empty ?? 'Nothing here yet.'}
              </td>
            </tr>
          ) : (
            props.rows.map((row, i) => (
              <tr
                key={props.rowKey ? props.rowKey(row, i) : i}
                class={[props.onRowClick ? 'clickable' : '', props.rowClass?.(row) ?? ''].filter(Boolean).join(' ') || undefined}
                tabIndex={props.onRowClick ? 0 : undefined}
                onClick={props.onRowClick ? () => props.onRowClick!(row) : undefined}
                onKeyDown={props.onRowClick ? (e: KeyboardEvent) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), props.onRowClick!(row)) : undefined}
              >
                {props.columns.map((c) => (
                  <td class={c.numeric ? 'num' : undefined} data-label={cards ? c.label : undefined}>{c.render ? c.render(row) : c.key ? String((row as Record<string, unknown>)[c.key] ?? '') : ''}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Banner(props: { kind?: 'info' | 'warning' | 'error' | 'success'; children: ComponentChildren }) {
  const kind = props.kind ?? 'info';
  return (
    <div class={`banner banner-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

/** The gateway's error object as the user should read it: message, and the field it names. */
export function ErrorBox(props: { error: unknown }) {
  if (props.error === undefined || props.error === null) return null;
  const e = props.error;
  const message = e instanceof ApiError ? e.message : e instanceof Error ? e.message : String(e);
  const param = e instanceof ApiError ? e.param : undefined;
  return (
    <Banner kind="error">
      {message}
      {param && <span class="error-param"> (field: {param})</span>}
    </Banner>
  );
}

/** A modal dialog (native <dialog>: focus is trapped and Escape closes it). */
export function Modal(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog ref={ref} class="modal" aria-label={props.title} onClose={props.onClose} onCancel={props.onClose}>
      <header class="modal-head">
        <h2>{props.title}</h2>
        <Button onClick={props.onClose} label="Close">
          ×
        </Button>
      </header>
      <div class="modal-body">{props.children}</div>
    </dialog>
  );
}

/** Usage against a limit; turns amber at 80% and red at 100%. */
export function UsageBar(props: { label: string; used: number; limit: number; format?: (n: number) => string }) {
  const pct = props.limit > 0 ? Math.min(100, (props.used / props.limit) * 100) : 0;
  const f = props.format ?? ((n: number) => String(n));
  const level = pct >= 100 ? 'over' : pct >= 80 ? 'high' : 'ok';
  return (
    <div class="usage">
      <span class="usage-label">
        {props.label}: {f(props.used)} / {f(props.limit)}
      </span>
      <div class={`usage-bar usage-${level}`} role="progressbar" aria-label={props.label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct)}>
        <div class="usage-fill" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

/** A secret shown once (a new webhook secret, a new virtual key): select-all text and a copy button. */
export function ShownOnce(props: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Banner kind="warning">
      <p>{props.label} — shown once; copy it now.</p>
      <code class="secret" data-testid="shown-once">
        {props.value}
      </code>{' '}
      <Button onClick={() => navigator.clipboard?.writeText(props.value).then(() => setCopied(true), () => undefined)}>{copied ? 'Copied' : 'Copy'}</Button>
    </Banner>
  );
}

/** Shown at the top of a page whose writes are refused (Kubernetes mode). */
export function ReadOnlyBanner(props: { reason: string | undefined; kind?: string }) {
  return (
    <Banner kind="info">
      Read-only: this gateway's configuration comes from Kubernetes.{props.kind ? ` Edit the ${props.kind} custom resources instead.` : ''} {props.reason ?? ''}
    </Banner>
  );
}

export function Loading() {
  return (
    <p class="loading" role="status">
      Loading…
    </p>
  );
}

export function PageHeader(props: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-head">
      <h1>{props.title}</h1>
      <div class="page-actions">{props.children}</div>
    </header>
  );
}

/** A headline number (a total, a rate) with its label. */
export function Stat(props: { label: string; value: string; hint?: string }) {
  return (
    <div class="stat">
      <span class="stat-label">{props.label}</span>
      <span class="stat-value">{props.value}</span>
      {props.hint && <span class="stat-label">{props.hint}</span>}
    </div>
  );
}
