// Names, labels and shapes the proxies rely on (the operator <-> proxy contract). The names the proxy
// reads come from the proxy's side of the contract, so the two cannot drift.
import { CONFIG_LABEL_SELECTOR, INDEX_CONFIGMAP, INDEX_KEY, PART_KEY, SECRET_NAME, SOURCES_PART_PREFIX, secretKeyName, type ConfigIndex } from '../../../proxy/src/contract.ts';

/** `secretKeyName`: the proxy checks that each resource uses only its own entries, by these names. */
export { INDEX_KEY, PART_KEY, SECRET_NAME, SOURCES_PART_PREFIX, secretKeyName };
export const FIELD_MANAGER = 'skybridge-operator';
export const INDEX_NAME = INDEX_CONFIGMAP;
export const PART_PREFIX = 'skybridge-config-part-';

export const LABELS: Readonly<Record<string, string>> = {
  'app.kubernetes.io/managed-by': 'skybridge-operator',
  'skybridge.dev/config': 'true',
};
/** Selects every object the operator renders. */
export const LABEL_SELECTOR = CONFIG_LABEL_SELECTOR;

export const partName = (n: number): string => `${PART_PREFIX}${n}`;
export const sourcesPartName = (n: number): string => `${SOURCES_PART_PREFIX}${n}`;

/** `skybridge-config-sources-3` -> 3; anything else -> undefined. */
export function sourcesPartNumber(name: string): number | undefined {
  if (!name.startsWith(SOURCES_PART_PREFIX)) return undefined;
  const rest = name.slice(SOURCES_PART_PREFIX.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

/** `skybridge-config-part-7` -> 7; anything else -> undefined. */
export function partNumber(name: string): number | undefined {
  if (!name.startsWith(PART_PREFIX)) return undefined;
  const rest = name.slice(PART_PREFIX.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : undefined;
}

/** Sections of the document that CRs fill, as named in index.json `managed`. */
export type ManagedSection =
  | 'providers'
  | 'virtual_keys'
  | 'budgets'
  | 'rate_limits'
  | 'routing_rules'
  | 'plugins'
  | 'webhooks'
  | 'mcp_clients'
  | 'teams'
  | 'customers';

/**
 * index.json as the operator writes it: the proxy's shape (schema/config-index.ts), with `managed`
 * keyed by the sections CRs fill (the proxy answers 409 to /api writes on those ids).
 */
export interface IndexDocument extends Omit<ConfigIndex, 'managed' | 'sourceParts'> {
  managed: Partial<Record<ManagedSection, string[]>>;
  /** Present when `sources` is in ConfigMaps of its own (then `managed` and `sources` are empty here). */
  sourceParts?: string[];
}
