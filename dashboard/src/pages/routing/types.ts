// Shapes of /api/routing/rules and its /validate and /test answers (proxy/src/api/routing-rules.ts,
// routing-test.ts), as the routing page reads them.

export type Scope = 'global' | 'customer' | 'team' | 'virtual_key';
export const SCOPES: ReadonlyArray<{ value: Scope; label: string }> = [
  { value: 'virtual_key', label: 'Virtual key' },
  { value: 'team', label: 'Team' },
  { value: 'customer', label: 'Customer' },
  { value: 'global', label: 'Global' },
];

export interface Target {
  provider?: string;
  model?: string;
  key_id?: string;
  weight: number;
}

export type Fallback = string | { provider: string; model?: string; key_id?: string; provider_key_name?: string };

export interface Rule {
  id: string;
  name: string;
  description?: string;
  enabled?: boolean;
  chain_rule?: boolean;
  cel_expression?: string;
  targets: Target[];
  fallbacks?: Fallback[];
  scope: Scope;
  scope_id: string | null;
  priority?: number;
  managed_by?: string;
  source?: string;
  /** Set when the served configuration skips the rule (it cannot compile): why. */
  error?: string;
}

export interface CelCheck {
  valid: boolean;
  error?: { message: string; position?: { column: number; offset: number } };
}

/** One rule evaluation of the audit trail (decide.ts RoutingStep, as the request log keeps it). */
export interface TrailStep {
  step: number;
  scope: Scope;
  scopeId: string | null;
  ruleId?: string;
  ruleName: string;
  expression: string;
  matched: boolean;
  skipped?: string;
  target?: { provider: string; model: string; keyId?: string };
  chain?: boolean;
}

export interface TestAnswer {
  decision: {
    matched: boolean;
    provider: string;
    model: string;
    key_id?: string;
    fallbacks: string[];
    rule_id?: string;
    rule_name?: string;
    scope?: Scope;
    scope_id?: string | null;
    error?: string;
  };
  targets?: Array<{ provider: string; model: string; key_id?: string }>;
  note?: string;
  virtual_key?: { id: string; name: string };
  routing_engines_used: string[];
  routing_rule_ids: string[];
  routing_engine_logs: TrailStep[] | { trail: TrailStep[]; error: string };
  draft?: { id: string; name: string; enabled: boolean };
  warnings: string[];
}

export const fallbackText = (f: Fallback): string => (typeof f === 'string' ? f : `${f.provider}/${f.model ?? ''}`);
export const targetText = (t: Target): string => `${t.provider ?? '(same provider)'}/${t.model ?? '(same model)'}${t.key_id ? ` [key ${t.key_id}]` : ''}`;
