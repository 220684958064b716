// The compiled form of the `governance` section, built once per snapshot: virtual keys indexed by a
// digest of their value, the team and customer each key belongs to, and every limit by id.
import { hash, timingSafeEqual } from 'node:crypto';
import type { GatewayConfig } from '../schema/gateway.ts';
import { keyId } from '../schema/key-id.ts';
import { runNow } from './steps.ts';
import type {
  AuthConfig, Budget, Customer, ModelConfig, PricingOverride, ProviderGovernance, RateLimit, Team, VirtualKey,
} from '../schema/governance.ts';

export type ModelSet = '*' | ReadonlySet<string>;

export interface ProviderGrant {
  provider: string;
  /** '*': whatever the provider's model catalog lists. */
  models: ModelSet;
  /** '*': any key of the provider. An empty set denies every key. */
  keyIds: ModelSet;
  /** null: only for explicit `provider/model` requests and as a fallback. */
  weight: number | null;
  budgetId?: string;
  rateLimitId?: string;
}

export interface VirtualKeyRuntime {
  record: VirtualKey;
  /** SHA-256 of the value. */
  digest: Buffer;
  team?: Team;
  customer?: Customer;
  grants: readonly ProviderGrant[];
}

export interface GovernanceRuntime {
  /** Inference calls without a virtual key are refused. */
  enforceAuth: boolean;
  virtualKeys: ReadonlyMap<string, VirtualKeyRuntime>;
  budgets: ReadonlyMap<string, Budget>;
  rateLimits: ReadonlyMap<string, RateLimit>;
  providerLimits: ReadonlyMap<string, ProviderGovernance>;
  modelConfigs: readonly ModelConfig[];
  pricingOverrides: ReadonlyMap<string, readonly PricingOverride[]>;
  auth: AuthConfig | undefined;
  /** Any budget or rate limit at all: without one the counter stage is skipped entirely. */
  hasLimits: boolean;
}

// One-shot hash: no Hash object per request.
const digest = (value: string): Buffer => hash('sha256', value, 'buffer');

/**
 * The digests of the last compile's key values: a reload (in Kubernetes, on every change to any
 * resource) hashes only the values that are new. Holds exactly the current keys' values, which the
 * snapshot holds anyway.
 */
let lastDigests = new Map<string, Buffer>();

/**
 * Each virtual key's compiled form, by the identity of its (immutable) record, reused while the team,
 * customer and providers it reads are the same objects (CompileMemo in snapshot.ts).
 */
export class GovernanceMemo {
  readonly keys = new WeakMap<VirtualKey, { team: Team | undefined; customer: Customer | undefined; providers: readonly unknown[]; rt: VirtualKeyRuntime }>();
  /** Virtual keys compiled (not reused). */
  keysCompiled = 0;
}

/** Virtual keys compiled between two yields of governanceSteps. */
const KEYS_PER_STEP = 250;

export function compileGovernance(config: GatewayConfig, memo?: GovernanceMemo): GovernanceRuntime {
  return runNow(governanceSteps(config, memo));
}

/** compileGovernance as steps (config/steps.ts): it yields after each slice of virtual keys. */
export function* governanceSteps(config: GatewayConfig, memo?: GovernanceMemo): Generator<void, GovernanceRuntime> {
  const g = config.governance ?? {};
  const teams = new Map((g.teams ?? []).map((t) => [t.id, t]));
  const customers = new Map((g.customers ?? []).map((c) => [c.id, c]));
  const byDigest = new Map<string, VirtualKeyRuntime>();
  const digests = new Map<string, Buffer>();
  let n = 0;
  for (const vk of g.virtual_keys ?? []) {
    if (++n % KEYS_PER_STEP === 0) yield;
    const team = vk.team_id ? teams.get(vk.team_id) : undefined;
    const customerId = vk.customer_id ?? team?.customer_id;
    const customer = customerId ? customers.get(customerId) : undefined;
    // The provider configs read for key names (keyIdSet): reused only while they are the same objects.
    const providers = (vk.provider_configs ?? []).map((pc) => config.providers?.[pc.provider]);
    const hit = memo?.keys.get(vk);
    let rt: VirtualKeyRuntime;
    if (hit && hit.team === team && hit.customer === customer && hit.providers.length === providers.length && hit.providers.every((p, i) => p === providers[i])) rt = hit.rt;
    else {
      const d = lastDigests.get(vk.value) ?? digest(vk.value);
      rt = {
        record: vk,
        digest: d,
        ...(team && { team }),
        ...(customer && { customer }),
        grants: (vk.provider_configs ?? []).map((pc) => ({
          provider: pc.provider,
          models: setOf(pc.allowed_models),
          keyIds: keyIdSet(pc.key_ids, pc.provider, config),
          weight: pc.weight ?? null,
          ...(pc.budget_id && { budgetId: pc.budget_id }),
          ...(pc.rate_limit_id && { rateLimitId: pc.rate_limit_id }),
        })),
      };
      if (memo) {
        memo.keys.set(vk, { team, customer, providers, rt });
        memo.keysCompiled++;
      }
    }
    digests.set(vk.value, rt.digest);
    byDigest.set(rt.digest.toString('base64'), rt);
  }
  lastDigests = digests;
  const budgets = new Map((g.budgets ?? []).map((b) => [b.id, b]));
  const rateLimits = new Map((g.rate_limits ?? []).map((r) => [r.id, r]));
  const pricingOverrides = pricingOverridesOf(config);
  const client = config.client;
  return {
    enforceAuth: client?.enforce_auth_on_inference ?? client?.enforce_governance_header ?? false,
    virtualKeys: byDigest,
    budgets,
    rateLimits,
    providerLimits: new Map((g.providers ?? []).map((p) => [p.name, p])),
    modelConfigs: g.model_configs ?? [],
    pricingOverrides,
    auth: g.auth_config ?? config.auth_config,
    hasLimits: budgets.size > 0 || rateLimits.size > 0,
  };
}

/** Key ids, where config.json may also name a key by its name. */
function keyIdSet(list: readonly string[] | undefined, provider: string, config: GatewayConfig): ModelSet {
  const set = setOf(list);
  if (set === '*') return set;
  const names = new Set((config.providers?.[provider]?.keys ?? []).map((k) => k.name));
  return new Set([...set].map((k) => (names.has(k) ? keyId(provider, k) : k)));
}

function setOf(list: readonly string[] | undefined): ModelSet {
  if (list?.includes('*')) return '*';
  return new Set(list ?? []);
}

/**
 * The virtual key whose value is `presented`. The lookup is by SHA-256 digest, so the time taken
 * does not depend on how much of a guess matches a real key; the final check is constant-time.
 */
export function findVirtualKey(rt: GovernanceRuntime, presented: string): VirtualKeyRuntime | undefined {
  // No keys configured (the plain gateway): nothing to hash on every request.
  if (rt.virtualKeys.size === 0) return undefined;
  const d = digest(presented);
  const hit = rt.virtualKeys.get(d.toString('base64'));
  if (!hit) return undefined;
  return timingSafeEqual(d, hit.digest) ? hit : undefined;
}

/**
 * Each provider's pricing overrides in the order they are tried (the first match wins): the
 * governance records for it or for every provider (written through /api), then its own
 * `pricing_overrides` (config.json). The record's `id` and `provider` are not price fields.
 */
export function pricingOverridesOf(config: GatewayConfig): Map<string, PricingOverride[]> {
  const out = new Map<string, PricingOverride[]>();
  const records = config.governance?.pricing_overrides ?? [];
  for (const name of Object.keys(config.providers ?? {})) {
    const list: PricingOverride[] = records.filter((r) => r.provider === undefined || r.provider === name).map(({ id: _id, provider: _p, ...o }) => o);
    list.push(...(config.providers?.[name]?.pricing_overrides ?? []));
    if (list.length) out.set(name, list);
  }
  return out;
}
