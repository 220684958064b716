// Version 12: what the overview breaks usage down by. Each record keeps the HTTP status it answered,
// whose error it was (record.ts ERROR_CLASSES) and whether the response cache answered it; one
// covering index over the time range serves the breakdowns (breakdown.ts) by provider, model,
// virtual key and team without reading the wide records.
import type { Migration } from './driver.ts';

export const USAGE_BREAKDOWN_MIGRATION: Migration = {
  version: 12,
  description: 'usage breakdowns: status code, error class and cache hit per record, and a covering index by time',
  statements: (d) => [
    'ALTER TABLE logs ADD COLUMN status_code INTEGER',
    'ALTER TABLE logs ADD COLUMN error_class TEXT',
    'ALTER TABLE logs ADD COLUMN cache_hit INTEGER NOT NULL DEFAULT 0',
    // Records written before: the status their error object names (successes left unknown rather
    // than rewriting every row); whether an error came from upstream was not kept, so an old error
    // is the gateway's when 5xx, else the client's.
    d.name === 'postgres'
      ? `UPDATE logs SET status_code = CASE WHEN (error_details::jsonb->>'status') ~ '^[0-9]{3}$' THEN (error_details::jsonb->>'status')::integer END
           WHERE status = 'error' AND error_details IS NOT NULL`
      : `UPDATE logs SET status_code = CAST(json_extract(error_details, '$.status') AS INTEGER) WHERE status = 'error' AND json_valid(error_details)`,
    `UPDATE logs SET error_class = CASE WHEN status_code >= 500 THEN 'gateway' ELSE 'client' END WHERE status = 'error'`,
    'CREATE INDEX logs_usage_cover ON logs (timestamp, parent_request_id, provider, model, virtual_key_id, team_id, status, error_class, cache_hit, total_tokens, cost, latency)',
  ],
};
