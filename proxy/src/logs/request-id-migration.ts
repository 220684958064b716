// The client-facing request id (request-id.ts) on request log records and async jobs, so a client's
// `x-request-id` (or an error body's `error.request_id`) finds the record: /api/logs?request_id=.
// Not unique (a client may reuse its own id; an agent request's turns share it), so not the key.
import type { Migration } from './driver.ts';

export const REQUEST_ID_MIGRATION: Migration = {
  version: 11,
  description: 'request ids: the x-request-id answered, on request log records and async jobs',
  statements: () => [
    'ALTER TABLE logs ADD COLUMN request_id TEXT',
    'CREATE INDEX logs_request_id ON logs (request_id)',
    'ALTER TABLE async_jobs ADD COLUMN request_id TEXT',
  ],
};
