// The audit record of a configuration reload (config.json edited, a new rendering of the operator):
// which paths changed and the document's hash before and after. Paths only, never values.
import type { AuditActor, AuditEntry } from './store.ts';
import { changedPaths } from './diff.ts';

const MAX_PATHS = 200;

export function reloadEntry(actor: AuditActor, source: string, before: unknown, after: unknown, hashBefore: string, hashAfter: string, extra: Record<string, unknown> = {}): AuditEntry {
  const changed = changedPaths(before, after);
  return {
    actor,
    action: 'reload',
    resource: 'config',
    outcome: 'success',
    details: { source, config_hash: { before: hashBefore, after: hashAfter }, changed: changed.slice(0, MAX_PATHS), ...(changed.length > MAX_PATHS && { changed_total: changed.length }), ...extra },
  };
}
