// One custom resource -> the config.json resources it stands for, checked on its own with the
// proxy's schemas. Secret material is replaced by `env.<KEY>` references and collected separately
// (it goes to the Secret, never to a ConfigMap). Pure: the Secrets are passed in.
import { Buffer } from 'node:buffer';
import { GatewayConfigSchema, ProviderConfigSchema, VirtualKeySchema, validator, type FieldError, validateRuleForWrite, resolvesEnvRef } from '../../../proxy/src/contract.ts';
import { secretKeyName } from '../render/contract.ts';
import { PLACEMENT } from '../render/document.ts';
import { crRef, kindInfo, type CustomResource, type Fragment } from './kinds.ts';
import { translateExtension } from './extensions.ts';
import { inlineLimits } from './inline-limits.ts';
import { translateGroup } from './teams.ts';
import { KEY_CONFIG_CREDENTIALS } from '../crds/specs.ts';

/** Data of the Secrets the CRs may reference, base64 as the API returns it. */
export interface SecretLookup {
  get(namespace: string, name: string): Readonly<Record<string, string>> | undefined;
  /** Which Secrets the operator reads at all, said with a missing one (e.g. only labelled ones). */
  hint?: string;
}

// Fragment lives in kinds.ts so extensions.ts can name it without importing this file (no cycle).
export type { Fragment } from './kinds.ts';

export interface Translation {
  fragments: Fragment[];
  /** Secret data key -> value (base64, the bytes as stored), referenced from the fragments as `env.<key>`. */
  secrets: Record<string, string>;
  /** Parts of the spec left out because what they reference is missing; the rest is rendered. */
  degraded?: FieldError[];
  /** After provider_configs were left out: position in the rendered list -> index in the spec. */
  providerConfigIndex?: number[];
}

export type RejectReason = 'InvalidSpec' | 'SecretNotFound' | 'Conflict' | 'DuplicateValue' | 'ReferenceNotFound' | 'TooLarge';

export interface Rejection {
  reason: RejectReason;
  message: string;
}

export const isRejection = (r: Translation | Rejection): r is Rejection => 'reason' in r;

const checkProvider = validator(ProviderConfigSchema);
const checkVirtualKey = validator(VirtualKeySchema);

/** The pattern of config.json `providers` keys, from the proxy's schema. */
export const PROVIDER_NAME_PATTERN = new RegExp(Object.keys((GatewayConfigSchema.properties.providers as { patternProperties: Record<string, unknown> }).patternProperties)[0]);

export function translate(cr: CustomResource, secrets: SecretLookup): Translation | Rejection {
  if (cr.conversionError) return invalid([cr.conversionError]);
  const spec = cr.spec ?? {};
  if (!isObject(spec)) return invalid([{ path: '(root)', message: 'must be an object' }]);
  const foreign = envReferences(cr, spec);
  if (foreign.length) return invalid(foreign);
  const refs = new SecretRefs(cr, secrets);
  let fragments: Fragment[] | Rejection;
  switch (cr.kind) {
    case 'Provider':
      fragments = provider(cr, spec, refs);
      break;
    case 'VirtualKey':
      fragments = virtualKey(cr, spec, refs);
      break;
    case 'RoutingRule':
      fragments = routingRule(cr, spec);
      break;
    case 'Team':
    case 'Customer': {
      const group = translateGroup(cr.kind, cr, spec);
      fragments = 'errors' in group ? invalid(group.errors) : group.fragments;
      break;
    }
    default: {
      const ext = translateExtension(cr, spec, (at, ref, field) => refs.use(at, ref, field));
      fragments = 'errors' in ext ? invalid(ext.errors) : ext.fragments;
    }
  }
  if (!Array.isArray(fragments)) return fragments;
  // Shape first, then Secrets: a broken spec is the thing to fix before a missing Secret.
  if (cr.kind === 'Provider') return withoutBrokenKeys(fragments, refs);
  return refs.resolve() ?? { fragments, secrets: refs.values };
}

/**
 * `env.<KEY>` written into a spec would resolve against the rendered Secret, which holds every
 * resource's credentials: a Provider's extra header naming `env.PROVIDER_..._KEYS_0_VALUE` would send
 * another provider's key to a host of its author's choosing. A resource reads only the Secret keys
 * it names itself (secretKeyRef), so no spec string of a kind whose section resolves references may
 * start with `env.`; the operator writes every reference the proxy sees.
 */
function envReferences(cr: CustomResource, spec: Record<string, unknown>): FieldError[] {
  if (!resolvesEnvRef(PLACEMENT[kindInfo(cr.kind).section].path.join('.'))) return [];
  const errors: FieldError[] = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') {
      if (v.startsWith('env.')) {
        errors.push({ path, message: `'${v.length > 80 ? `${v.slice(0, 80)}...` : v}' is not allowed: a custom resource cannot name environment variables or entries of the rendered Secret; take a secret from a Secret of this namespace with secretKeyRef where the field has a ...From form` });
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (isObject(v)) for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(spec, '');
  return errors;
}

/**
 * A provider whose Secret lost some of its keys keeps serving with the others (a removed Secret
 * key must not take the whole provider, and every virtual key using it, down). Only when no key
 * is left, or a reference outside `keys` is broken, is the provider refused.
 */
function withoutBrokenKeys(fragments: Fragment[], refs: SecretRefs): Translation | Rejection {
  const rejection = refs.resolve();
  if (!rejection) return { fragments, secrets: refs.values };
  const config = fragments[0].value;
  const keys = Array.isArray(config.keys) ? (config.keys as unknown[]) : [];
  const broken = new Set<number>();
  for (const m of refs.missing) {
    const i = /^keys\[(\d+)\]/.exec(m.at);
    if (!i) return rejection;
    broken.add(Number(i[1]));
  }
  if (broken.size >= keys.length) return rejection;
  const secrets: Record<string, string> = {};
  for (const [envKey, value] of Object.entries(refs.values)) {
    const i = refs.keyIndexOf(envKey);
    if (i === undefined || !broken.has(i)) secrets[envKey] = value;
  }
  const degraded = refs.missing.map((m) => ({ path: m.at, message: `${m.message}: this key is left out, the provider serves with its other keys` }));
  return { fragments: [{ ...fragments[0], value: { ...config, keys: keys.filter((_, i) => !broken.has(i)) } }], secrets, degraded };
}

function provider(cr: CustomResource, spec: Record<string, unknown>, refs: SecretRefs): Fragment[] | Rejection {
  const { name = cr.metadata.name, ...config } = spec;
  if (typeof name !== 'string' || !PROVIDER_NAME_PATTERN.test(name)) {
    return invalid([{ path: 'name', message: `provider name '${String(name)}' must match ${PROVIDER_NAME_PATTERN.source} (set spec.name when metadata.name does not)` }]);
  }
  const errors: FieldError[] = [];
  if (Array.isArray(config.keys)) {
    config.keys = config.keys.map((key: unknown, i: number) => {
      if (!isObject(key)) return key;
      const { valueFrom, ...rest } = key;
      const at = `keys[${i}]`;
      if (rest.value !== undefined) {
        errors.push({ path: `${at}.value`, message: 'secret material is never a field: use valueFrom.secretKeyRef' });
        return rest;
      }
      if (valueFrom === undefined) {
        errors.push({ path: `${at}.valueFrom`, message: 'is required (valueFrom.secretKeyRef names the Secret key holding the API key)' });
        return rest;
      }
      for (const [config, fields] of Object.entries(KEY_CONFIG_CREDENTIALS)) {
        const kc = rest[config];
        if (!isObject(kc)) continue;
        const out: Record<string, unknown> = { ...kc };
        for (const f of fields) {
          if (out[f] !== undefined) errors.push({ path: `${at}.${config}.${f}`, message: `secret material is never a field: use ${f}From.secretKeyRef` });
          const from = out[`${f}From`];
          delete out[`${f}From`];
          if (from !== undefined) out[f] = refs.use(`${at}.${config}.${f}From`, from, `keys_${i}_${f}`);
        }
        rest[config] = out;
      }
      return { ...rest, value: refs.use(`${at}.valueFrom`, valueFrom, `keys_${i}_value`) };
    });
  }
  // An InferencePool without a namespace is the Provider's neighbour: the proxies run elsewhere.
  const nc = config.network_config;
  if (isObject(nc) && isObject(nc.inference_pool) && nc.inference_pool.namespace === undefined) {
    config.network_config = { ...nc, inference_pool: { ...nc.inference_pool, namespace: cr.metadata.namespace } };
  }
  const checked = checkProvider(config);
  errors.push(...(Array.isArray(checked) ? checked : []), ...refs.errors);
  if (errors.length) return invalid(errors);
  return [{ section: 'providers', id: name, value: config }];
}

function virtualKey(cr: CustomResource, spec: Record<string, unknown>, refs: SecretRefs): Fragment[] | Rejection {
  const id = cr.metadata.name;
  const { valueFrom, budget: _budget, rateLimit: _rateLimit, ...rest } = spec;
  const errors: FieldError[] = [];
  if (rest.id !== undefined && rest.id !== id) errors.push({ path: 'id', message: `a VirtualKey's id is its metadata.name ('${id}'); remove spec.id` });
  if (rest.value !== undefined) errors.push({ path: 'value', message: 'secret material is never a field: use valueFrom.secretKeyRef' });
  if (valueFrom === undefined && rest.value === undefined) errors.push({ path: 'valueFrom', message: 'is required (valueFrom.secretKeyRef names the Secret key holding the virtual key)' });
  const limits = inlineLimits(spec, `vk-${id}`, "the key's");
  errors.push(...limits.errors);
  const vk: Record<string, unknown> = { ...rest, id, name: rest.name ?? id, ...limits.ids };
  if (valueFrom !== undefined) vk.value = refs.use('valueFrom', valueFrom, 'value');
  const checked = checkVirtualKey(vk);
  if (Array.isArray(checked)) errors.push(...checked.filter((e) => !(valueFrom === undefined && e.path === 'value')));
  errors.push(...refs.errors);
  if (errors.length) return invalid(errors);
  return [{ section: 'virtual_keys', id, value: vk }, ...limits.fragments];
}

function routingRule(cr: CustomResource, spec: Record<string, unknown>): Fragment[] | Rejection {
  const rule: Record<string, unknown> = { ...spec, id: spec.id ?? cr.metadata.name, name: spec.name ?? cr.metadata.name };
  const errors = validateRuleForWrite(rule);
  if (errors.length) return invalid(errors);
  return [{ section: 'routing_rules', id: rule.id as string, value: rule }];
}

/** Collects a CR's secretKeyRefs as `env.<KEY>` references, then resolves them against the Secrets. */
class SecretRefs {
  readonly errors: FieldError[] = [];
  readonly values: Record<string, string> = {};
  /** The unresolved references of the last resolve(), by spec path. */
  readonly missing: { at: string; message: string }[] = [];
  private readonly pending: { at: string; name: string; key: string; envKey: string }[] = [];
  private readonly cr: CustomResource;
  private readonly secrets: SecretLookup;

  constructor(cr: CustomResource, secrets: SecretLookup) {
    this.cr = cr;
    this.secrets = secrets;
  }

  /** `valueFrom` at spec path `at` -> the `env.<KEY>` string standing for it in the document. */
  use(at: string, valueFrom: unknown, field: string): string {
    const ref = isObject(valueFrom) && isObject(valueFrom.secretKeyRef) ? valueFrom.secretKeyRef : undefined;
    const envKey = secretKeyName(this.cr.kind, this.cr.metadata.namespace, this.cr.metadata.name, field);
    if (!ref || typeof ref.name !== 'string' || !ref.name || typeof ref.key !== 'string' || !ref.key) {
      this.errors.push({ path: `${at}.secretKeyRef`, message: 'needs the name and key of a Secret in the same namespace' });
    } else {
      this.pending.push({ at, name: ref.name, key: ref.key, envKey });
    }
    return `env.${envKey}`;
  }

  /** A rejection naming every missing Secret or key, or undefined when all resolved. */
  resolve(): Rejection | undefined {
    const ns = this.cr.metadata.namespace;
    this.missing.length = 0;
    for (const p of this.pending) {
      const data = this.secrets.get(ns, p.name);
      if (!data) this.missing.push({ at: p.at, message: `Secret ${ns}/${p.name} not found${this.secrets.hint ? ` (${this.secrets.hint})` : ''}` });
      else if (data[p.key] === undefined) this.missing.push({ at: p.at, message: `Secret ${ns}/${p.name} has no key '${p.key}'` });
      else this.values[p.envKey] = Buffer.from(data[p.key], 'base64').toString('base64');
    }
    if (!this.missing.length) return undefined;
    const list = this.missing.map((m) => `spec.${m.at}: ${m.message}`);
    return { reason: 'SecretNotFound', message: `${list.join('; ')} (create it, or fix the reference in ${crRef(this.cr)})` };
  }

  /** The provider key (index in spec.keys) a resolved value belongs to. */
  keyIndexOf(envKey: string): number | undefined {
    const at = this.pending.find((p) => p.envKey === envKey)?.at;
    const m = at ? /^keys\[(\d+)\]/.exec(at) : null;
    return m ? Number(m[1]) : undefined;
  }
}

export function invalid(errors: FieldError[]): Rejection {
  return { reason: 'InvalidSpec', message: describeErrors(errors) };
}

/** `spec.keys[0].weight: must be >= 0; spec.name: is required` */
export function describeErrors(errors: FieldError[]): string {
  return errors.map((e) => `${specPath(e.path)}: ${e.message}`).join('; ');
}

const specPath = (path: string): string => (path === '(root)' || path === '' ? 'spec' : path.startsWith('[') ? `spec${path}` : `spec.${path}`);

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
