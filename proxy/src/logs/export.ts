// An export of a log search, as CSV or JSON lines: pure functions from one record to one line. The
// list's fields, without content (GET /api/logs/{id} has it). CSV cells that a spreadsheet would run
// as a formula (=, +, -, @ first) are prefixed with ', as OWASP advises for CSV injection.
import type { LogEntry } from './record.ts';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPE: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' };

const errorMessage = (e: LogEntry): string | undefined => {
  const d = e.error_details as { message?: unknown } | undefined;
  return typeof d?.message === 'string' ? d.message : undefined;
};

/** CSV columns, in order, each read from a record. */
const COLUMNS: [name: string, read: (e: LogEntry) => unknown][] = [
  ['timestamp', (e) => e.timestamp],
  ['id', (e) => e.id],
  ['status', (e) => e.status],
  ['status_code', (e) => e.status_code],
  ['error_class', (e) => e.error_class],
  ['object', (e) => e.object],
  ['provider', (e) => e.provider],
  ['model', (e) => e.model],
  ['requested_model', (e) => e.requested_model],
  ['virtual_key_id', (e) => e.virtual_key_id],
  ['virtual_key_name', (e) => e.virtual_key_name],
  ['team_id', (e) => e.team_id],
  ['customer_id', (e) => e.customer_id],
  ['selected_key_name', (e) => e.selected_key_name],
  ['prompt_tokens', (e) => e.token_usage.prompt_tokens],
  ['completion_tokens', (e) => e.token_usage.completion_tokens],
  ['total_tokens', (e) => e.token_usage.total_tokens],
  ['cached_tokens', (e) => e.token_usage.prompt_tokens_details?.cached_tokens ?? 0],
  ['cost', (e) => e.cost],
  ['latency_ms', (e) => e.latency],
  ['ttft_ms', (e) => e.ttft],
  ['cache_hit', (e) => e.cache_hit],
  ['stream', (e) => e.stream],
  ['number_of_retries', (e) => e.number_of_retries],
  ['fallback_index', (e) => e.fallback_index],
  ['routing_rule_name', (e) => e.routing_rule_name],
  ['error_message', errorMessage],
];

export function csvCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  let s = typeof v === 'string' ? v : String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export const csvHeader = (): string => `${COLUMNS.map(([n]) => n).join(',')}\r\n`;
export const csvLine = (e: LogEntry): string => `${COLUMNS.map(([, read]) => csvCell(read(e))).join(',')}\r\n`;
export const jsonLine = (e: LogEntry): string => `${JSON.stringify(e)}\n`;
