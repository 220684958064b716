// The bench's governed configuration grown to many virtual keys and routing rules: shared by
// bench/config-scale.ts (a gateway under traffic) and bench/config-reload-stalls.ts (a reload in process).
import { governedConfig } from './procs.ts';

interface Governance {
  budgets: Record<string, unknown>[];
  rate_limits: Record<string, unknown>[];
  teams: Record<string, unknown>[];
  virtual_keys: Record<string, unknown>[];
  routing_rules: Record<string, unknown>[];
}

/** The bench's governed configuration grown to `keys` virtual keys and `rules` routing rules; `generation` changes every budget (a reload). */
export function scaledConfig(keys: number, rules: number, generation = 0): Record<string, unknown> {
  const base = governedConfig();
  const g = structuredClone(base.governance) as Governance;
  const extraKeys = Math.max(0, keys - g.virtual_keys.length);
  for (let t = 0; t < Math.min(100, extraKeys); t++) g.teams.push({ id: `team-${t}`, name: `team ${t}` });
  for (let i = 0; i < extraKeys; i++) {
    g.budgets.push({ id: `b-${i}`, max_limit: 1000 + generation, reset_duration: '1M' });
    g.rate_limits.push({ id: `rl-${i}`, request_max_limit: 10_000, request_reset_duration: '1m' });
    g.virtual_keys.push({
      id: `vk-${i}`, name: `key ${i}`, value: `sk-bf-scale-${String(i).padStart(10, '0')}`, team_id: `team-${i % 100}`, budget_id: `b-${i}`, rate_limit_id: `rl-${i}`,
      provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['*'], weight: 1 }],
    });
  }
  (g.budgets[0] as { max_limit: number }).max_limit = 1e9 + generation;
  const extraRules = Math.max(0, rules - g.routing_rules.length);
  for (let i = 0; i < extraRules; i++) {
    g.routing_rules.push({
      name: `scaled-${i}`, scope: 'virtual_key', scope_id: extraKeys > 0 ? `vk-${i % extraKeys}` : 'other-vk', priority: i,
      cel_expression: `headers["x-tier"] == "t${i}" && model == "gpt-4o"`, targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }],
    });
  }
  return { ...base, governance: g };
}

