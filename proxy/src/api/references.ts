// What still points at a record, so that deleting it (or renaming a provider key) can be refused
// with a 409 naming the referrers instead of leaving a dangling reference.
import type { GatewayConfig } from '../schema/gateway.ts';
import type { RoutingRule } from '../schema/governance.ts';
import { keyId } from '../schema/key-id.ts';

export type RecordKind = 'budget' | 'rate_limit' | 'team' | 'customer' | 'virtual_key';

const ruleLabel = (r: RoutingRule) => `routing rule '${r.name}'`;

export function referrers(doc: GatewayConfig, kind: RecordKind, id: string): string[] {
  const g = doc.governance ?? {};
  const out: string[] = [];
  if (kind === 'budget' || kind === 'rate_limit') {
    const field = kind === 'budget' ? 'budget_id' : 'rate_limit_id';
    const uses = (x: { budget_id?: string; rate_limit_id?: string }) => x[field] === id;
    for (const c of g.customers ?? []) if (uses(c)) out.push(`customer '${c.name}'`);
    for (const t of g.teams ?? []) if (uses(t)) out.push(`team '${t.name}'`);
    for (const vk of g.virtual_keys ?? []) {
      if (uses(vk)) out.push(`virtual key '${vk.name}'`);
      for (const pc of vk.provider_configs ?? []) if (uses(pc)) out.push(`provider config '${pc.provider}' of virtual key '${vk.name}'`);
    }
    for (const mc of g.model_configs ?? []) if (uses(mc)) out.push(`model config '${mc.id}'`);
    for (const p of g.providers ?? []) if (uses(p)) out.push(`provider governance '${p.name}'`);
    return out;
  }
  if (kind === 'customer') {
    for (const t of g.teams ?? []) if (t.customer_id === id) out.push(`team '${t.name}'`);
    for (const vk of g.virtual_keys ?? []) if (vk.customer_id === id) out.push(`virtual key '${vk.name}'`);
  }
  if (kind === 'team') for (const vk of g.virtual_keys ?? []) if (vk.team_id === id) out.push(`virtual key '${vk.name}'`);
  for (const r of g.routing_rules ?? []) if (r.scope === kind && r.scope_id === id) out.push(ruleLabel(r));
  return out;
}

export function providerReferrers(doc: GatewayConfig, provider: string): string[] {
  const g = doc.governance ?? {};
  const out: string[] = [];
  for (const vk of g.virtual_keys ?? []) if (vk.provider_configs?.some((pc) => pc.provider === provider)) out.push(`virtual key '${vk.name}'`);
  for (const mc of g.model_configs ?? []) if (mc.provider === provider) out.push(`model config '${mc.id}'`);
  for (const p of g.providers ?? []) if (p.name === provider) out.push(`provider governance '${p.name}'`);
  for (const r of g.routing_rules ?? []) {
    const inTargets = r.targets.some((t) => t.provider === provider);
    const inFallbacks = (r.fallbacks ?? []).some((f) => (typeof f === 'string' ? f.slice(0, f.indexOf('/')) : f.provider) === provider);
    if (inTargets || inFallbacks) out.push(ruleLabel(r));
  }
  return out;
}

/** Virtual keys and routing rules that name this key (by name or by id). */
export function providerKeyReferrers(doc: GatewayConfig, provider: string, keyName: string): string[] {
  const g = doc.governance ?? {};
  const id = keyId(provider, keyName);
  const out: string[] = [];
  for (const vk of g.virtual_keys ?? []) {
    if (vk.provider_configs?.some((pc) => pc.provider === provider && pc.key_ids?.some((k) => k === keyName || k === id))) out.push(`virtual key '${vk.name}'`);
  }
  for (const r of g.routing_rules ?? []) {
    const inTargets = r.targets.some((t) => t.provider === provider && t.key_id === id);
    const inFallbacks = (r.fallbacks ?? []).some((f) => typeof f !== 'string' && f.provider === provider && (f.key_id === id || f.provider_key_name === keyName));
    if (inTargets || inFallbacks) out.push(ruleLabel(r));
  }
  return out;
}

export function stillUsed(what: string, users: readonly string[]): string {
  return `${what} is still used by ${users.join(', ')}; change or delete ${users.length === 1 ? 'it' : 'them'} first`;
}
