// A routing rule's id, in a module of its own (as key-id.ts): the rule schema (governance.ts) stays
// free of node modules, so the dashboard's build can read its types.
import { createHash } from 'node:crypto';

/**
 * A routing rule's id: its own, or (a rule written in config.json without one) a stable id derived
 * from scope and name, so every rule can be read, updated and deleted by id.
 */
export function ruleId(rule: { id?: string; scope?: string; scope_id?: string | null; name: string }): string {
  if (rule.id) return rule.id;
  const h = createHash('sha256').update(`routing_rule\u0000${rule.scope ?? 'global'}\u0000${rule.scope_id ?? ''}\u0000${rule.name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
