// The routing page's scopes and how it writes targets and fallbacks; the answer shapes of
// /api/routing/rules and its /validate and /test are proxy/src/api/answers.ts.
import type { RoutingFallback as Fallback, RoutingScope as Scope, RoutingTarget as Target } from '../../../../proxy/src/api/answers.ts';

export const SCOPES: ReadonlyArray<{ value: Scope; label: string }> = [
  { value: 'virtual_key', label: 'Virtual key' },
  { value: 'team', label: 'Team' },
  { value: 'customer', label: 'Customer' },
  { value: 'global', label: 'Global' },
];

export const fallbackText = (f: Fallback): string => (typeof f === 'string' ? f : `${f.provider}/${f.model ?? ''}`);
export const targetText = (t: Target): string => `${t.provider ?? '(same provider)'}/${t.model ?? '(same model)'}${t.key_id ? ` [key ${t.key_id}]` : ''}`;
