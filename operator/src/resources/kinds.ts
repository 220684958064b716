// The custom resources the operator reads (group gateway.skybridge.dev). Two versions are served:
// v1alpha1 (the config.json field names) and v1beta1 (the same fields in camelCase, the storage
// version). The operator reads the storage version and works on the v1alpha1 shape, the one its
// translation to config.json is written for (conversion/convert.ts turns one into the other).
import type { ManagedSection } from '../render/contract.ts';

export const GROUP = 'gateway.skybridge.dev';
/** The version the operator works on internally (config.json's field names). */
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
/** The version objects are stored as, and the one the operator reads and writes status on. */
export const STORAGE_VERSION = 'v1beta1';
export const STORAGE_API_VERSION = `${GROUP}/${STORAGE_VERSION}`;
/** Every served version, oldest first. */
export const VERSIONS = [VERSION, STORAGE_VERSION] as const;
export type ApiVersionName = (typeof VERSIONS)[number];

export type KindName = 'Provider' | 'VirtualKey' | 'RoutingRule' | 'Webhook' | 'MCPClient' | 'CachePolicy' | 'Team' | 'Customer';

export interface KindInfo {
  kind: KindName;
  plural: string;
  /** Section of the document its resources go to (index.json `managed`). */
  section: ManagedSection;
}

export const KINDS: readonly KindInfo[] = [
  { kind: 'Provider', plural: 'providers', section: 'providers' },
  { kind: 'VirtualKey', plural: 'virtualkeys', section: 'virtual_keys' },
  { kind: 'RoutingRule', plural: 'routingrules', section: 'routing_rules' },
  { kind: 'Webhook', plural: 'webhooks', section: 'webhooks' },
  { kind: 'MCPClient', plural: 'mcpclients', section: 'mcp_clients' },
  { kind: 'CachePolicy', plural: 'cachepolicies', section: 'plugins' },
  { kind: 'Team', plural: 'teams', section: 'teams' },
  { kind: 'Customer', plural: 'customers', section: 'customers' },
];

export const kindInfo = (kind: KindName): KindInfo => KINDS.find((k) => k.kind === kind) as KindInfo;

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  labels?: Record<string, string>;
}

/** A custom resource as read from the API (the informer cache). */
export interface CustomResource {
  apiVersion?: string;
  kind: KindName;
  metadata: ObjectMeta;
  spec?: unknown;
  /** Set when the object could not be turned into the internal shape: the field (spec path) and why. */
  conversionError?: { path: string; message: string };
  status?: { observedGeneration?: number; conditions?: Condition[]; reason?: string; message?: string; served?: string; servedReplicas?: number; replicas?: number; toolCount?: number; lastError?: string };
}

/** `Provider default/openai` */
export const crRef = (cr: { kind: string; metadata: { namespace: string; name: string } }): string =>
  `${cr.kind} ${cr.metadata.namespace}/${cr.metadata.name}`;

/** crRef of a resource object, made once per object: the informers hand the same objects pass after pass (several passes per edit), and they are never changed. */
export function refOf(cr: CustomResource): string {
  let ref = refs.get(cr);
  if (ref === undefined) refs.set(cr, (ref = crRef(cr)));
  return ref;
}
const refs = new WeakMap<CustomResource, string>();

/**
 * Stable processing order: the ones accepted before first (a served resource is never displaced by
 * another: creation times have seconds precision, and an older one may have been refused until its
 * Secret appeared), then oldest first, then namespace/name.
 */
export function compareResources(a: CustomResource, b: CustomResource): number {
  const sa = wasAccepted(a);
  if (sa !== wasAccepted(b)) return sa ? -1 : 1;
  const ta = timestamp(a.metadata.creationTimestamp);
  const tb = timestamp(b.metadata.creationTimestamp);
  if (ta !== tb) return ta - tb;
  const ka = `${a.kind}/${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.kind}/${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The resources in compareResources' order, each one's sort key worked out once (thousands of resources: a timestamp parse per comparison showed in profiles). */
export function sortResources(list: readonly CustomResource[]): CustomResource[] {
  const keyed = list.map((r) => ({ accepted: wasAccepted(r), ...identityKey(r) }));
  const last = lastSort;
  // The informers hand the resources in the same order pass after pass; an edit keeps the sort key.
  const order =
    last && last.keyed.length === keyed.length && keyed.every((k, i) => k.accepted === last.keyed[i].accepted && k.t === last.keyed[i].t && k.name === last.keyed[i].name)
      ? last.order
      : keyed.map((_, i) => i).sort((x, y) => {
          const a = keyed[x];
          const b = keyed[y];
          return a.accepted !== b.accepted ? (a.accepted ? -1 : 1) : a.t !== b.t ? a.t - b.t : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
        });
  lastSort = { keyed, order };
  return order.map((i) => list[i]);
}

/** The last sort's keys, in the order given, and its order: a pass whose keys are the same sorts nothing. */
let lastSort: { keyed: { accepted: boolean; t: number; name: string }[]; order: number[] } | undefined;

/** A resource object's creation time and name key, made once (the informer hands the same objects pass after pass). */
const identityKeys = new WeakMap<CustomResource, { t: number; name: string }>();
function identityKey(r: CustomResource): { t: number; name: string } {
  let key = identityKeys.get(r);
  if (!key) identityKeys.set(r, (key = { t: timestamp(r.metadata.creationTimestamp), name: `${r.kind}/${r.metadata.namespace}/${r.metadata.name}` }));
  return key;
}

const wasAccepted = (r: CustomResource): boolean => r.status?.conditions?.some((c) => c.type === 'Accepted' && c.status === 'True') ?? false;

function timestamp(t: string | Date | undefined): number {
  if (t === undefined) return 0;
  const n = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(n) ? 0 : n;
}

/** One resource of the document, e.g. a provider or a virtual key. */
export interface Fragment {
  section: ManagedSection;
  id: string;
  value: Record<string, unknown>;
  /** Where in the spec it came from when not the whole spec (`budget`). */
  specPath?: string;
}
