// All custom resources -> the desired rendered state and a verdict per resource. Each CR is checked
// on its own (translate.ts), then together: ids unique per section, and the assembled document
// through the proxy's own checkConfig. A CR the whole-document check blames is left out and the
// rest is checked again, so one bad CR never blocks the others. Pure and order-independent.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { type CheckMemo, checkConfig, ConfigError, type FieldError, type RoutingRule, validateRuleForWrite } from '../../../proxy/src/contract.ts';
import { buildDocument, ownerOf, type SourcedFragment } from '../render/document.ts';
import type { RenderInput } from '../render/output.ts';
import { DEFAULT_LIMITS, type SizeLimits } from '../render/limits.ts';
import { tooLargeAlone, tooLargeTogether } from './size.ts';
import { sameEntries } from '../render/memo.ts';
import { refOf, sortResources, type CustomResource } from './kinds.ts';
import { describeErrors, isRejection, translate, type Rejection, type SecretLookup, type Translation } from './translate.ts';

export interface Verdict {
  accepted: boolean;
  reason: string;
  message: string;
}

export interface DesiredState {
  input: RenderInput;
  /** By `crRef` (`Kind namespace/name`). */
  verdicts: Map<string, Verdict>;
  /** Problems of the whole document that no single CR explains: the render must not be applied. */
  unattributed: string[];
  /** checkConfig warnings (sections accepted but not built yet). */
  warnings: string[];
}

const ACCEPTED: Verdict = { accepted: true, reason: 'Valid', message: 'The spec is valid and included in the rendered configuration.' };

/** Accepted, but parts of the spec are left out because what they reference is missing. */
const degradedVerdict = (errors: FieldError[]): Verdict => ({
  accepted: true,
  reason: 'Degraded',
  message: `Rendered without the parts whose references are broken: ${describeErrors(errors)}`,
});

/** Turns one CR into its fragments (translate.ts); the operator passes a caching one (translation-cache.ts). */
export type Translator = (cr: CustomResource, secrets: SecretLookup) => Translation | Rejection;

/**
 * `memo`: what the whole-document check keeps between passes (the controller's), so each pass checks
 * and resolves only the resources' objects it has not seen; the fragments are never mutated.
 */
export function desiredState(resources: readonly CustomResource[], secrets: SecretLookup, limits: SizeLimits = DEFAULT_LIMITS, translator: Translator = translate, memo?: CheckMemo): DesiredState {
  const verdicts = new Map<string, Verdict>();
  const reject = (ref: string, r: Rejection) => verdicts.set(ref, { accepted: false, reason: r.reason, message: r.message });
  const live = sortResources(resources.filter((r) => !r.metadata.deletionTimestamp));

  // Alone, then against the ones accepted before it (oldest first, so a new CR never evicts an old one).
  const items = live.map((cr) => ({ ref: refOf(cr), t: translator(cr, secrets) }));
  const last = memo ? claimStates.get(memo) : undefined;
  const state = (last && claimChanged(last, items, limits)) ?? claimAll(items, limits);
  if (memo) claimStates.set(memo, state);
  const accepted = new Map<string, Translation>();
  for (const e of state.order) {
    if (e.rejection) reject(e.ref, e.rejection);
    else accepted.set(e.ref, e.t as Translation);
  }

  // Together: every round either passes or removes (or narrows) at least one CR, so this ends.
  const degraded = new Map<string, FieldError[]>();
  for (const [ref, t] of accepted) if (t.degraded?.length) degraded.set(ref, [...t.degraded]);
  const unattributed: string[] = [];
  let warnings: string[] = [];
  for (;;) {
    const fragments: SourcedFragment[] = [];
    for (const [ref, t] of accepted) for (const f of t.fragments) fragments.push(sourcedOnce(f, ref));
    const made = buildDocument(fragments);
    // Made stable at once: the size check and the render then know an unchanged `sources` by identity.
    const built = { ...made, sources: stableSources(made.sources) };
    const { merged: secretData, env } = secretsOf([...accepted.values()]);
    let errors: FieldError[];
    try {
      warnings = checkConfig(memo ? built.document : structuredClone(built.document), 'the custom resources', env, undefined, memo).warnings;
      errors = [];
    } catch (err) {
      errors = err instanceof ConfigError ? err.errors : [{ path: '(root)', message: String(err) }];
    }
    const blamed = new Map<string, FieldError[]>();
    for (const e of errors) {
      const owner = ownerOf(built.owners, e.path);
      if (!owner) {
        unattributed.push(`${e.path}: ${e.message}`);
        continue;
      }
      const message = groupReference(owner.source, owner.specPath, e.message, live) ?? friendly(e.message, env);
      const path = message === EMPTY_SECRET ? referencePath(owner.specPath) : owner.specPath;
      blamed.set(owner.source, [...(blamed.get(owner.source) ?? []), { path, message }]);
    }
    let changed = false;
    for (const [ref, errs] of blamed) {
      const t = accepted.get(ref) as Translation;
      const narrowed = withoutProviderConfigs(t, errs);
      const inSpec = errs.map((e) => specProviderConfigPath(t, e));
      if (narrowed) {
        accepted.set(ref, narrowed);
        degraded.set(ref, [...(degraded.get(ref) ?? []), ...inSpec]);
      } else {
        accepted.delete(ref);
        reject(ref, { reason: errs.every(isReferenceError) ? 'ReferenceNotFound' : 'InvalidSpec', message: describeErrors([...(degraded.get(ref) ?? []), ...inSpec]) });
      }
      changed = true;
    }
    // The document is valid; what it cannot say: a rule must only send traffic where it can go.
    if (!changed) {
      for (const [ref, errs] of ruleReferences(accepted, built.document, live)) {
        accepted.delete(ref);
        reject(ref, { reason: 'ReferenceNotFound', message: `${describeErrors(errs)} (the rule is left out of the rendered configuration until it exists)` });
        changed = true;
      }
    }
    // What fits: the newest CRs that push the Secrets or the index over their ceilings are left out.
    if (!changed) {
      for (const [ref, r] of tooLargeTogether(accepted, built, secretData, limits)) {
        accepted.delete(ref);
        reject(ref, r);
        changed = true;
      }
    }
    if (!changed) {
      for (const ref of accepted.keys()) {
        const d = degraded.get(ref);
        verdicts.set(ref, d?.length ? degradedVerdict(d) : ACCEPTED);
      }
      return {
        input: { document: built.document, secrets: secretData, managed: built.managed, sources: built.sources },
        verdicts,
        unattributed,
        warnings,
      };
    }
  }
}

/** One resource in processing order: its translation, and why it was refused or what it claims. */
interface Claimant {
  ref: string;
  t: Translation | Rejection;
  rejection: Rejection | undefined;
  /** What it owns once accepted (allClaims); none when refused. */
  keys: readonly string[];
}

/**
 * The claims of one pass: who owns each id, Secret key and key value (`claimed`: key -> owner), and
 * the routing rules accepted, with every resource's outcome in processing order. Kept per CheckMemo
 * (the controller's), so a pass whose order is the same and whose few changed resources claim what
 * they claimed before starts from it instead of claiming everything again.
 */
interface ClaimState {
  limits: SizeLimits;
  order: readonly Claimant[];
  claimed: Map<string, string>;
  rules: RoutingRule[];
  ruleNames: Map<string, RoutingRule[]>;
}
const claimStates = new WeakMap<CheckMemo, ClaimState>();

/** Every resource against the ones accepted before it: the first to claim an id, a Secret key or a key value keeps it. */
function claimAll(items: readonly { ref: string; t: Translation | Rejection }[], limits: SizeLimits): ClaimState {
  const claimed = new Map<string, string>(); // `<section>/<id>`, `secret/<KEY>` or a key value's digest -> owner
  const rules: RoutingRule[] = [];
  const ruleNames = new Map<string, RoutingRule[]>();
  const order: Claimant[] = [];
  for (const { ref, t } of items) {
    if (isRejection(t)) {
      order.push({ ref, t, rejection: t, keys: [] });
      continue;
    }
    const clash = conflict(t, ref, claimed) ?? duplicateKeyValue(t, claimed) ?? ruleClash(t, rules, ruleNames) ?? tooLargeAloneOnce(t, limits);
    if (clash) {
      order.push({ ref, t, rejection: clash, keys: [] });
      continue;
    }
    const keys = allClaims(t);
    for (const c of keys) claimed.set(c, ref);
    for (const f of t.fragments) {
      if (f.section !== 'routing_rules') continue;
      const rule = f.value as RoutingRule;
      rules.push(rule);
      const key = ruleNameKey(rule);
      ruleNames.set(key, [...(ruleNames.get(key) ?? []), rule]);
    }
    order.push({ ref, t, rejection: undefined, keys });
  }
  return { limits, order, claimed, rules, ruleNames };
}

/**
 * claimAll's answer from the last pass's, when it is sure to be the same: the same resources in the
 * same order, and each changed one accepted before and now, claiming exactly the keys it claimed (so
 * every owner stays, and no other resource's outcome can change), with no routing rule among them
 * (a rule's check reads the other rules). Undefined otherwise: then everything is claimed again.
 */
function claimChanged(last: ClaimState, items: readonly { ref: string; t: Translation | Rejection }[], limits: SizeLimits): ClaimState | undefined {
  if (last.limits !== limits || last.order.length !== items.length) return undefined;
  const changed: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const was = last.order[i];
    if (was.ref !== items[i].ref) return undefined;
    if (was.t !== items[i].t) changed.push(i);
  }
  if (!changed.length) return last;
  for (const i of changed) {
    const was = last.order[i];
    const t = items[i].t;
    if (was.rejection || isRejection(t) || t.fragments.some((f) => f.section === 'routing_rules')) return undefined;
    const keys = allClaims(t);
    if (keys.length !== was.keys.length || keys.some((k, j) => k !== was.keys[j])) return undefined;
    if (tooLargeAloneOnce(t, limits)) return undefined;
  }
  const order = last.order.slice();
  for (const i of changed) order[i] = { ...last.order[i], t: items[i].t };
  return { ...last, order };
}

/** claimsOf and the key value's claim: everything an accepted translation owns. */
const allClaimKeys = new WeakMap<Translation, readonly string[]>();
function allClaims(t: Translation): readonly string[] {
  let keys = allClaimKeys.get(t);
  if (!keys) {
    const value = keyValueClaim(t);
    allClaimKeys.set(t, (keys = value ? [...claimsOf(t), value] : claimsOf(t)));
  }
  return keys;
}

/** A kept translation's fragment with its source, made once (thousands per render otherwise). */
const sourcedFragments = new WeakMap<object, SourcedFragment>();
function sourcedOnce(f: Translation['fragments'][number], source: string): SourcedFragment {
  const known = sourcedFragments.get(f);
  if (known && known.source === source) return known;
  const sourced = { ...f, source };
  sourcedFragments.set(f, sourced);
  return sourced;
}

const PROVIDER_CONFIG = /^provider_configs\[(\d+)\]/;

/** The proxy's words for a team_id / customer_id naming nothing (config/governance-rules.ts). */
const GROUP_ID = /^no (team|customer) with id '(.*)'$/;
const GROUP_FIELDS = new Set(['team_id', 'customer_id']);
/** What groupReference says: the reference names a Team or Customer that is not served. */
const MISSING_GROUP = / is not in the rendered configuration: /;

/** A problem of what the resource points at, not of the resource itself: fixed elsewhere. */
const isReferenceError = (e: FieldError): boolean => PROVIDER_CONFIG.test(e.path) || (GROUP_FIELDS.has(e.path) && MISSING_GROUP.test(e.message));

/**
 * Why a Team or Customer that a resource names is not served, by name: one that does not exist in
 * any watched namespace, or one that exists but is refused (its own status says why).
 */
function missingGroup(kind: 'Team' | 'Customer', id: string, live: readonly CustomResource[]): string {
  const found = live.filter((r) => r.kind === kind && r.metadata.name === id).map((r) => `${r.metadata.namespace}/${r.metadata.name}`);
  const why = found.length ? `${kind} ${found.join(', ')} is not accepted (see its status)` : `no ${kind} named '${id}' exists in the watched namespaces`;
  return `${kind} '${id}' is not in the rendered configuration: ${why}`;
}

/** A team_id / customer_id the whole-document check found unresolved, said in terms of the kinds. */
function groupReference(source: string, specPath: string, message: string, live: readonly CustomResource[]): string | undefined {
  const m = GROUP_FIELDS.has(specPath) ? GROUP_ID.exec(message) : null;
  if (!m) return undefined;
  const what = source.startsWith('Team ') ? 'this team and the keys in it are' : 'this key is';
  return `${missingGroup(m[1] === 'team' ? 'Team' : 'Customer', m[2], live)}; until it is, ${what} left out of the rendered configuration (callers are refused, never served without its limits)`;
}

/** tooLargeAlone depends on the translation and the limits only: once per kept translation. */
const aloneChecked = new WeakMap<Translation, { limits: SizeLimits; result: Rejection | undefined }>();
function tooLargeAloneOnce(t: Translation, limits: SizeLimits): Rejection | undefined {
  const hit = aloneChecked.get(t);
  if (hit && hit.limits === limits) return hit.result;
  const result = tooLargeAlone(t, limits);
  aloneChecked.set(t, { limits, result });
  return result;
}

/**
 * A virtual key whose only problems are some of its provider_configs (a provider gone, a key id
 * it no longer has) keeps the others: callers keep the providers that still work. Undefined when
 * anything else is wrong or no provider config would be left (an empty list would allow all).
 */
function withoutProviderConfigs(t: Translation, errs: readonly FieldError[]): Translation | undefined {
  const vk = t.fragments.find((f) => f.section === 'virtual_keys');
  if (!vk) return undefined;
  const configs = Array.isArray(vk.value.provider_configs) ? (vk.value.provider_configs as unknown[]) : [];
  const drop = new Set<number>();
  for (const e of errs) {
    const m = PROVIDER_CONFIG.exec(e.path);
    if (!m) return undefined;
    drop.add(Number(m[1]));
  }
  if (drop.size >= configs.length) return undefined;
  const index = t.providerConfigIndex ?? configs.map((_, i) => i);
  const keep = configs.map((_, i) => i).filter((i) => !drop.has(i));
  const fragments = t.fragments.map((f) => (f === vk ? { ...f, value: { ...f.value, provider_configs: keep.map((i) => configs[i]) } } : f));
  return { ...t, fragments, providerConfigIndex: keep.map((i) => index[i]) };
}

/** An error's path with the provider_configs index of the spec, not of the narrowed list. */
function specProviderConfigPath(t: Translation, e: FieldError): FieldError {
  const m = PROVIDER_CONFIG.exec(e.path);
  if (!m || !t.providerConfigIndex) return e;
  return { ...e, path: `provider_configs[${t.providerConfigIndex[Number(m[1])]}]${e.path.slice(m[0].length)}` };
}

/** Routing rules naming a provider no Provider defines, or scoped to a virtual key, team or customer that is not served. */
function ruleReferences(accepted: ReadonlyMap<string, Translation>, document: Record<string, unknown>, live: readonly CustomResource[]): Map<string, FieldError[]> {
  const providers = new Set(Object.keys((document.providers ?? {}) as object));
  const governance = (document.governance ?? {}) as { virtual_keys?: { id: string }[]; teams?: { id: string }[]; customers?: { id: string }[] };
  const vks = new Set((governance.virtual_keys ?? []).map((v) => v.id));
  const groups = { team: new Set((governance.teams ?? []).map((t) => t.id)), customer: new Set((governance.customers ?? []).map((c) => c.id)) };
  const out = new Map<string, FieldError[]>();
  for (const [ref, t] of accepted) {
    for (const f of t.fragments) {
      if (f.section !== 'routing_rules') continue;
      const rule = f.value as { targets?: { provider?: string }[]; fallbacks?: (string | { provider?: string })[]; scope?: string; scope_id?: string | null };
      const errs: FieldError[] = [];
      const needProvider = (path: string, p: string | undefined) => {
        if (p !== undefined && !providers.has(p)) errs.push({ path, message: `provider '${p}' is not defined by any Provider` });
      };
      (rule.targets ?? []).forEach((x, i) => needProvider(`targets[${i}].provider`, x?.provider));
      (rule.fallbacks ?? []).forEach((x, i) => needProvider(`fallbacks[${i}]${typeof x === 'string' ? '' : '.provider'}`, typeof x === 'string' ? x.split('/')[0] : x?.provider));
      if (rule.scope === 'virtual_key' && typeof rule.scope_id === 'string' && !vks.has(rule.scope_id)) {
        errs.push({ path: 'scope_id', message: `virtual key '${rule.scope_id}' is not defined by any accepted VirtualKey` });
      }
      if ((rule.scope === 'team' || rule.scope === 'customer') && typeof rule.scope_id === 'string' && !groups[rule.scope].has(rule.scope_id)) {
        errs.push({ path: 'scope_id', message: missingGroup(rule.scope === 'team' ? 'Team' : 'Customer', rule.scope_id, live) });
      }
      if (errs.length) out.set(ref, errs);
    }
  }
  return out;
}

/** What a translation claims (`<section>/<id>` of each fragment, then `secret/<KEY>`), made once per kept translation. */
const claimKeys = new WeakMap<Translation, string[]>();
function claimsOf(t: Translation): string[] {
  let keys = claimKeys.get(t);
  if (!keys) claimKeys.set(t, (keys = [...t.fragments.map((f) => `${f.section}/${f.id}`), ...Object.keys(t.secrets).map((k) => `secret/${k}`)]));
  return keys;
}

function conflict(t: Translation, ref: string, claimed: ReadonlyMap<string, string>): Rejection | undefined {
  const keys = claimsOf(t);
  for (let i = 0; i < keys.length; i++) {
    const owner = claimed.get(keys[i]);
    if (!owner) continue;
    if (i < t.fragments.length) {
      const f = t.fragments[i];
      return { reason: 'Conflict', message: `${f.section} id '${f.id}' is already defined by ${owner}; rename one of them (ids are unique across watched namespaces)` };
    }
    return { reason: 'Conflict', message: `its Secret data key ${keys[i].slice('secret/'.length)} collides with one of ${owner} (names differ only in punctuation); rename one of them` };
  }
  return undefined;
}

/**
 * The claim on a virtual key's value (a digest: the map never holds the key itself). Callers are
 * told apart by the value alone, so two keys with one value would leave the proxy to pick one, and
 * the whole-document check would refuse whichever sorts later, the served one as often as not.
 */
function keyValueClaim(t: Translation): string | undefined {
  // Translations are kept between renders (translation-cache.ts): hash each value once.
  if (claims.has(t)) return claims.get(t);
  const claim = computeKeyValueClaim(t);
  claims.set(t, claim);
  return claim;
}
const claims = new WeakMap<Translation, string | undefined>();

function computeKeyValueClaim(t: Translation): string | undefined {
  const vk = t.fragments.find((f) => f.section === 'virtual_keys');
  const ref = typeof vk?.value.value === 'string' && vk.value.value.startsWith('env.') ? vk.value.value.slice(4) : undefined;
  const data = ref === undefined ? undefined : t.secrets[ref];
  if (data === undefined) return undefined;
  return `vk-value/${createHash('sha256').update(Buffer.from(data, 'base64')).digest('hex')}`;
}

/** A virtual key whose value another, older one already has: refused, the other keeps serving. */
function duplicateKeyValue(t: Translation, claimed: ReadonlyMap<string, string>): Rejection | undefined {
  const claim = keyValueClaim(t);
  const owner = claim && claimed.get(claim);
  if (!owner) return undefined;
  return {
    reason: 'DuplicateValue',
    message: `spec.valueFrom: the Secret value it references is already the value of ${owner}, which keeps serving it (a key is known by its value alone); give this key a value of its own, or delete the other one first`,
  };
}

/** A rule's name within its scope: what must be unique. */
const ruleNameKey = (r: RoutingRule): string => `${r.name}\u0000${r.scope ?? 'global'}\u0000${r.scope_id ?? ''}`;

/** Whether a rule object passes validateRuleForWrite on its own: once per kept translation's fragment. */
const ruleFine = new WeakMap<object, boolean>();

/**
 * Routing rule names are unique within a scope (the management API refuses duplicates too). A rule
 * fine on its own whose name is free is passed at the cost of a lookup (every rule is checked on
 * every render); otherwise validateRuleForWrite against the rules before it gives the exact report.
 */
function ruleClash(t: Translation, rules: readonly RoutingRule[], named: ReadonlyMap<string, readonly RoutingRule[]>): Rejection | undefined {
  for (const f of t.fragments) {
    if (f.section !== 'routing_rules') continue;
    let fine = ruleFine.get(f.value);
    if (fine === undefined) ruleFine.set(f.value, (fine = validateRuleForWrite(f.value).length === 0));
    const rule = f.value as RoutingRule;
    const taken = named.get(ruleNameKey(rule))?.some((r) => rule.id === undefined || r.id !== rule.id);
    if (fine && !taken) continue;
    const errors = validateRuleForWrite(f.value, { existing: rules });
    if (errors.length) return { reason: 'Conflict', message: describeErrors(errors) };
  }
  return undefined;
}

/** Each translation's Secret values decoded once (kept translations are reused across renders). */
const decoded = new WeakMap<object, Record<string, string>>();

/** The decoded values of every translation: what `env.` references in the document resolve against. */
function decodedSecrets(translations: Iterable<Translation>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of translations) {
    let values = decoded.get(t.secrets);
    if (!values) decoded.set(t.secrets, (values = Object.fromEntries(Object.entries(t.secrets).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]))));
    Object.assign(out, values);
  }
  return out;
}

function mergeSecrets(translations: Iterable<Translation>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of translations) Object.assign(out, t.secrets);
  return out;
}

/**
 * The merged and the decoded Secret values of the accepted translations, made again only when their
 * secrets objects are not the very ones of the last call (an edit that changes no value keeps them;
 * each render merges thousands otherwise). Callers never change what they are given.
 */
let lastSecrets: { of: object[]; merged: Record<string, string>; env: Record<string, string> } | undefined;
function secretsOf(translations: readonly Translation[]): { merged: Record<string, string>; env: Record<string, string> } {
  const of = translations.map((t) => t.secrets);
  const last = lastSecrets;
  // A re-translated resource has a new secrets object, most often with the same few entries.
  const same = (a: object, b: object) => a === b || sameEntries(a as Record<string, string>, b as Record<string, string>);
  if (last && last.of.length === of.length && last.of.every((s, i) => same(s, of[i]))) {
    last.of = of;
    return last;
  }
  lastSecrets = { of, merged: mergeSecrets(translations), env: decodedSecrets(translations) };
  return lastSecrets;
}

/** The last `sources`, kept while every entry is the same: later steps (size, render) then know it by identity. */
let lastSources: Record<string, string> | undefined;
function stableSources(sources: Record<string, string>): Record<string, string> {
  if (lastSources && sameEntries(lastSources, sources)) return lastSources;
  lastSources = sources;
  return sources;
}

const EMPTY_SECRET = 'the Secret value it references is empty';

/** The proxy speaks of environment variables; here there are only the Secret values the CRs reference. */
function friendly(message: string, env: Readonly<Record<string, string>>): string {
  const m = /^environment variable (\S+) is not set$/.exec(message);
  if (!m) return message;
  if (m[1] in env) return EMPTY_SECRET;
  return `'env.${m[1]}' cannot be resolved in Kubernetes: give the value, or a secretKeyRef where the field takes one`;
}

/** The spec field holding the reference for a config field: `keys[0].value` -> `keys[0].valueFrom`, `headers.X` -> `headersFrom.X`. */
function referencePath(configPath: string): string {
  if (/(^|\.)(value|secret)$/.test(configPath)) return `${configPath}From`;
  return configPath.replace(/(^|\.)headers\./, '$1headersFrom.');
}
