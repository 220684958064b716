// Team and Customer CRs -> governance.teams / governance.customers, each with its own inline budget
// and rate limit (`team-<name>`, `customer-<name>`), checked with the proxy's own schemas. Their id
// is metadata.name, so VirtualKeys (team_id, customer_id), Teams (customer_id) and RoutingRules
// (scope_id) reference them by name; whether a reference resolves is the whole document's question
// (desired.ts), not this resource's.
import { CustomerSchema, TeamSchema, validator, type FieldError } from '../../../proxy/src/contract.ts';
import type { ExtensionResult } from './extensions.ts';
import { inlineLimits } from './inline-limits.ts';
import type { CustomResource } from './kinds.ts';

const checkTeam = validator(TeamSchema);
const checkCustomer = validator(CustomerSchema);

/** The prefix of a group's inline limits' ids: disjoint from `vk-`, so no two kinds' limits collide. */
const GROUP_LIMIT_PREFIX = { Team: 'team', Customer: 'customer' } as const;

export function translateGroup(kind: 'Team' | 'Customer', cr: CustomResource, spec: Record<string, unknown>): ExtensionResult {
  const id = cr.metadata.name;
  const what = kind === 'Team' ? 'team' : 'customer';
  const { budget: _budget, rateLimit: _rateLimit, ...rest } = spec;
  const errors: FieldError[] = [];
  if (rest.id !== undefined && rest.id !== id) errors.push({ path: 'id', message: `a ${kind}'s id is its metadata.name ('${id}'), which references name; remove spec.id` });
  const limits = inlineLimits(spec, `${GROUP_LIMIT_PREFIX[kind]}-${id}`, `the ${what}'s`);
  errors.push(...limits.errors);
  const value: Record<string, unknown> = { ...rest, id, name: rest.name ?? id, ...limits.ids };
  const checked = kind === 'Team' ? checkTeam(value) : checkCustomer(value);
  if (Array.isArray(checked)) errors.push(...checked);
  if (errors.length) return { errors };
  return { fragments: [{ section: kind === 'Team' ? 'teams' : 'customers', id, value }, ...limits.fragments] };
}
