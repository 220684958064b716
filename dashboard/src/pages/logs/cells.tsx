// Small renderers shared by the logs list and detail view.
import type { LogEntry } from '../../../../proxy/src/api/answers.ts';

export function StatusBadge(props: { status: string }) {
  const cls = props.status === 'success' ? 'badge-ok' : props.status === 'error' ? 'badge-error' : 'badge-muted';
  return <span class={`badge ${cls}`}>{props.status}</span>;
}

export const modelOf = (e: LogEntry): string => (e.provider ? `${e.provider}/${e.model ?? '?'}` : (e.model ?? '—'));
export const vkOf = (e: LogEntry): string => e.virtual_key_name ?? e.virtual_key_id ?? '—';

/** Where the list was (filters, page) when a detail view was opened, for its "back" link. */
let lastList = '#/logs';
export const rememberList = (hash: string): void => {
  lastList = hash;
};
export const listHref = (): string => lastList;
