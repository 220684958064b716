// The check every configuration document passes, wherever it comes from: config.json, the config
// store, a management API write, a Kubernetes rendering, and the operator (through contract.ts)
// before it renders one. Validate against the schema, resolve env.VAR and vault references, then the rules a
// schema cannot say. Built from the schema floor and each part's own checks, so it loads no stage.
// Every problem is reported with its JSON path.
import { mcpConfigErrors, vkMcpErrors } from '../schema/mcp.ts';
import { GatewayConfigSchema, UNBUILT_CLIENT_FIELDS, UNBUILT_SECTIONS, type GatewayConfig } from '../schema/gateway.ts';
import { validator, type FieldError } from '../schema/validate.ts';
import { PROVIDER_KINDS } from '../providers/catalog.ts';
import { governanceErrors, governanceErrorSteps } from './governance-rules.ts';
import { azureConfigErrors } from '../providers/azure/key.ts';
import { vertexKeyErrors } from '../providers/vertex/config.ts';
import { unsafeJson } from '../schema/names.ts';
import { safetyErrors, safetyErrorSteps, safetyWarnings } from './safety.ts';
import { webhookConfigErrors } from './webhook-rules.ts';
import { cacheConfigErrors, SemanticCacheConfigSchema } from '../schema/cache.ts';
import { OtelPluginConfigSchema, otelConfigErrors, otelWarnings } from '../schema/plugins.ts';
import { isReference, isVaultRef, parseVaultRef, readRef, resolvesEnvRef, type VaultLookup } from '../schema/env-ref.ts';

export class ConfigError extends Error {
  readonly errors: FieldError[];
  constructor(source: string, errors: FieldError[]) {
    super(`invalid configuration in ${source}:\n` + errors.map((e) => `  - ${e.path}: ${e.message}`).join('\n'));
    this.errors = errors;
  }
}

export interface LoadedConfig {
  /** env.VAR references resolved: what the snapshot compiles. */
  config: GatewayConfig;
  /** As written (references unresolved): what the config store keeps. */
  raw: GatewayConfig;
  warnings: string[];
}

const validateConfig = validator(GatewayConfigSchema);
const validateCacheConfig = validator(SemanticCacheConfigSchema);
const cacheConfigProblems = (v: unknown): FieldError[] | undefined => {
  const r = validateCacheConfig(v);
  return Array.isArray(r) ? r : undefined;
};
const validateOtelConfig = validator(OtelPluginConfigSchema);
const otelConfigProblems = (v: unknown): FieldError[] | undefined => {
  const r = validateOtelConfig(v);
  return Array.isArray(r) ? r : undefined;
};

/** The process's vault values (config/vault.ts sets it once a vault is configured), read by every check. */
let currentVault: VaultLookup | undefined;

export function setVaultLookup(lookup: VaultLookup | undefined): void {
  currentVault = lookup;
}

/**
 * Checks a document. With a `memo` (a source that checks one document after another: the Kubernetes
 * follower, the operator), each resource's object is checked and resolved once and reused while it
 * and the values it references are unchanged; the result is the same as without one, errors included.
 */
export function checkConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, vault: VaultLookup | undefined = currentVault, memo?: CheckMemo): LoadedConfig {
  if (memo) {
    const reused = checkReusing(raw, source, env, vault, memo);
    if (reused) return reused;
    memo.stats.whole++;
  }
  const steps = checkConfigSteps(raw, source, env, vault);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * checkConfig as steps: it yields between its passes over the document, so a reload of a large
 * configuration can leave the event loop free between them (config/steps.ts runInSteps); the result
 * is the same. (Run at once here, not through steps.ts: the operator loads this file and no more.)
 */
export function* checkConfigSteps(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, vault: VaultLookup | undefined = currentVault): Generator<void, LoadedConfig> {
  // Before anything copies the document: a `__proto__` key would become a prototype on the first copy.
  const unsafe = unsafeJson(raw);
  if (unsafe) throw new ConfigError(source, [unsafe]);
  yield;
  const result = validateConfig(raw);
  if (Array.isArray(result)) throw new ConfigError(source, result);
  yield;
  return yield* checkValidSteps(result, source, env, vault);
}

/**
 * checkConfigSteps for a document whose first two passes (`__proto__`, the schema) ran elsewhere
 * (a reload's reader thread): `problems` is what they found, reported as they would have been.
 */
export function* checkVettedSteps(raw: unknown, problems: readonly FieldError[], source: string, env: NodeJS.ProcessEnv = process.env, vault: VaultLookup | undefined = currentVault): Generator<void, LoadedConfig> {
  if (problems.length) throw new ConfigError(source, [...problems]);
  return yield* checkValidSteps(raw as GatewayConfig, source, env, vault);
}

/** The check's passes after the schema: references resolved, then the rules a schema cannot say. */
function* checkValidSteps(result: GatewayConfig, source: string, env: NodeJS.ProcessEnv, vault: VaultLookup | undefined): Generator<void, LoadedConfig> {
  const errors: FieldError[] = [];
  const config = (yield* resolveRefsSteps(result, undefined, { env, vault }, errors, 0)) as GatewayConfig;
  yield;
  // In steps: over 10,000 virtual keys, the safety and the governance rules are each a long pass.
  errors.push(...semanticErrors(config));
  yield;
  errors.push(...(yield* safetyErrorSteps(config, result)));
  yield;
  errors.push(...(yield* governanceErrorSteps(config)));
  yield;
  errors.push(...mcpConfigErrors(config.mcp), ...vkMcpErrors(config.governance?.virtual_keys), ...webhookConfigErrors(config.webhooks), ...cacheConfigErrors(config, cacheConfigProblems), ...auditConfigErrors(config), ...otelConfigErrors(config, otelConfigProblems));
  if (errors.length) throw new ConfigError(source, errors);
  return { config, raw: result, warnings: warningsOf(config) };
}

/** The rules a schema cannot say, over the whole (resolved) document: each from its owner. */
function ruleErrors(config: GatewayConfig, raw: GatewayConfig): FieldError[] {
  return [...semanticErrors(config), ...safetyErrors(config, raw), ...governanceErrors(config), ...mcpConfigErrors(config.mcp), ...vkMcpErrors(config.governance?.virtual_keys), ...webhookConfigErrors(config.webhooks), ...cacheConfigErrors(config, cacheConfigProblems), ...auditConfigErrors(config), ...otelConfigErrors(config, otelConfigProblems)];
}

const warningsOf = (config: GatewayConfig): string[] => [...unbuiltWarnings(config), ...safetyWarnings(config), ...otelWarnings(config)];

/** A resource's object as checked and resolved, and the variables it read with their values then. */
interface CheckedItem {
  resolved: unknown;
  reads: [string, string | undefined][];
}

/**
 * What checkConfig keeps between the documents of one source: each resource's object (by collection,
 * name and text) once it passed the schema and its references resolved. Two generations are kept, so
 * an object left out of one check (the operator checks again without a resource it blamed) is still
 * known to the next. The objects of a checked document must not be changed afterwards.
 */
export class CheckMemo {
  #current = new Map<string, CheckedItem>();
  #previous = new Map<string, CheckedItem>();
  /** An object's memo key, by identity (the operator hands the same objects again): made and hashed once. */
  readonly #keys = new WeakMap<object, { collection: number; key: string | number; memoKey: string }>();
  /** Checks that reused what they could; whole-document checks (a document the memo cannot split, or with errors); objects checked and reused. */
  readonly stats = { reusing: 0, whole: 0, checked: 0, reused: 0 };

  /** Collection, name (a keyed collection's) and text: an object's identity as far as its check goes. */
  keyOf(item: Item): string {
    const v = item.value;
    const isObject = v !== null && typeof v === 'object';
    const known = isObject ? this.#keys.get(v) : undefined;
    if (known && known.collection === item.collection && known.key === (typeof item.key === 'string' ? item.key : '')) return known.memoKey;
    const key = typeof item.key === 'string' ? item.key : '';
    const memoKey = `${item.collection}\u0000${key}\u0000${JSON.stringify(v) ?? 'undefined'}`;
    if (isObject) this.#keys.set(v, { collection: item.collection, key, memoKey });
    return memoKey;
  }

  get(key: string, env: NodeJS.ProcessEnv): CheckedItem | undefined {
    const hit = this.#current.get(key) ?? this.#previous.get(key);
    return hit && hit.reads.every(([name, value]) => env[name] === value) ? hit : undefined;
  }

  /** The objects of a document that passed its per-object checks (the map is the memo's from now on). */
  keep(items: Map<string, CheckedItem>): void {
    this.#previous = this.#current;
    this.#current = items;
  }
}

/**
 * checkConfig with a memo: the schema over the document's skeleton and the objects not seen before
 * (items are checked one by one, so the ones seen before need no second look), references resolved
 * for those alone, then the rules over the whole. Undefined when the document cannot be split or a
 * schema or reference problem needs the whole-document check's exact report.
 */
function checkReusing(raw: unknown, source: string, env: NodeJS.ProcessEnv, vault: VaultLookup | undefined, memo: CheckMemo): LoadedConfig | undefined {
  const split = splitDocument(raw);
  if (!split) return undefined;
  const kept = new Map<string, CheckedItem>();
  const keys: string[] = [];
  const resolved: unknown[] = [];
  const fresh: number[] = [];
  split.items.forEach((item, i) => {
    const key = memo.keyOf(item);
    keys.push(key);
    const hit = memo.get(key, env);
    if (hit) kept.set(key, hit);
    else fresh.push(i);
    resolved.push(hit?.resolved);
  });
  const partial = withItems(split.skeleton, fresh.map((i) => split.items[i]));
  // A `__proto__` key anywhere: the whole check names it.
  if (unsafeJson(partial)) return undefined;
  const checked = validateConfig(partial);
  if (Array.isArray(checked)) {
    // Only the skeleton and the new objects can be wrong: the same errors the whole document gives, once placed.
    const positions = new Map<number, number[]>();
    for (const i of fresh) {
      const { collection, key } = split.items[i];
      if (typeof key === 'number') positions.set(collection, [...(positions.get(collection) ?? []), key]);
    }
    throw new ConfigError(source, checked.map((e) => ({ ...e, path: wholePath(e.path, positions) })));
  }
  const errors: FieldError[] = [];
  const skeleton = resolveRefs(split.skeleton, undefined, { env, vault }, errors) as Record<string, unknown>;
  if (errors.length) return undefined;
  for (const i of fresh) {
    const item = split.items[i];
    const reads = new Map<string, string | undefined>();
    let usedVault = false;
    const recording = new Proxy(env, {
      get: (target, name) => {
        const value = Reflect.get(target, name) as string | undefined;
        if (typeof name === 'string') reads.set(name, value);
        return value;
      },
    });
    const lookup: VaultLookup | undefined = vault && ((ref) => ((usedVault = true), vault(ref)));
    resolved[i] = resolveRefs(item.value, atOf(item), { env: recording, vault: lookup }, errors);
    if (errors.length) return undefined;
    // A vault value may rotate under the same text: such an object is resolved every time.
    if (!usedVault) kept.set(keys[i], { resolved: resolved[i], reads: [...reads] });
  }
  memo.stats.checked += fresh.length;
  memo.stats.reused += split.items.length - fresh.length;
  memo.stats.reusing++;
  memo.keep(kept);
  const config = withItems(skeleton, split.items.map((item, i) => ({ collection: item.collection, key: item.key, value: resolved[i] }))) as GatewayConfig;
  const ruled = ruleErrors(config, raw as GatewayConfig);
  if (ruled.length) throw new ConfigError(source, ruled);
  return { config, raw: raw as GatewayConfig, warnings: warningsOf(config) };
}

// ---- A document as its per-resource objects (each provider, virtual key, routing rule, webhook,
// MCP client...) and the rest of it: what the incremental check (CheckMemo) works in. Pure.

/** Where the per-resource objects sit: a map keyed by name (providers) or a list of objects. */
interface Collection {
  path: readonly string[];
  keyed: boolean;
}

/**
 * The collections whose items the JSON Schema checks one by one (no minItems, maxItems, uniqueItems
 * or maxProperties on the collections themselves): an item valid on its own is valid among any others.
 * What holds between items (unique ids, references) is a rule over the whole document (check.ts).
 */
const COLLECTIONS: readonly Collection[] = [
  { path: ['providers'], keyed: true },
  { path: ['governance', 'budgets'], keyed: false },
  { path: ['governance', 'rate_limits'], keyed: false },
  { path: ['governance', 'customers'], keyed: false },
  { path: ['governance', 'teams'], keyed: false },
  { path: ['governance', 'virtual_keys'], keyed: false },
  { path: ['governance', 'routing_rules'], keyed: false },
  { path: ['governance', 'model_configs'], keyed: false },
  { path: ['governance', 'pricing_overrides'], keyed: false },
  { path: ['governance', 'providers'], keyed: false },
  { path: ['webhooks'], keyed: false },
  { path: ['mcp', 'client_configs'], keyed: false },
];

/** One per-resource object: which collection, its name (keyed) or position (list), and its JSON path. */
interface Item {
  collection: number;
  key: string | number;
  value: unknown;
}

interface SplitDocument {
  /** The document with every collection emptied (`{}` or `[]` where it was), in its key order. */
  skeleton: Record<string, unknown>;
  /** Every item, collection by collection, in document order. */
  items: Item[];
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The document's items and its skeleton; undefined when the document does not have the expected
 * shape where a collection sits (the whole-document check then says what is wrong).
 */
function splitDocument(doc: unknown): SplitDocument | undefined {
  if (!isPlain(doc)) return undefined;
  const items: Item[] = [];
  const empties: { collection: number; empty: unknown }[] = [];
  for (let c = 0; c < COLLECTIONS.length; c++) {
    const { path, keyed } = COLLECTIONS[c];
    let node: unknown = doc;
    for (let i = 0; i < path.length - 1 && node !== undefined; i++) {
      if (!isPlain(node)) return undefined;
      node = Object.hasOwn(node, path[i]) ? node[path[i]] : undefined;
    }
    if (node === undefined) continue;
    if (!isPlain(node)) return undefined;
    const leaf = path[path.length - 1];
    const list = Object.hasOwn(node, leaf) ? node[leaf] : undefined;
    if (list === undefined) continue;
    if (keyed) {
      if (!isPlain(list)) return undefined;
      for (const key of Object.keys(list)) {
        // Never set through assignment below (it would set a prototype): the whole check refuses it.
        if (key === '__proto__') return undefined;
        items.push({ collection: c, key, value: list[key] });
      }
      empties.push({ collection: c, empty: {} });
    } else {
      if (!Array.isArray(list)) return undefined;
      list.forEach((value: unknown, i) => items.push({ collection: c, key: i, value }));
      empties.push({ collection: c, empty: [] });
    }
  }
  const skeleton = replaceCollections(doc, new Map(empties.map((e) => [e.collection, e.empty])));
  return { skeleton, items };
}

/**
 * `skeleton` with its collections holding `items` (a subset, or other values at the same places),
 * in the order given. The objects along the way are copies; the items are placed as they are.
 */
function withItems(skeleton: Plain, items: readonly Pick<Item, 'collection' | 'key' | 'value'>[]): Plain {
  const filled = new Map<number, unknown>();
  for (const item of items) {
    const { keyed } = COLLECTIONS[item.collection];
    let target = filled.get(item.collection) as Plain | unknown[] | undefined;
    if (!target) {
      target = keyed ? {} : [];
      filled.set(item.collection, target);
    }
    if (keyed) (target as Plain)[item.key as string] = item.value;
    else (target as unknown[]).push(item.value);
  }
  // Collections present in the skeleton but given no item stay empty.
  for (let c = 0; c < COLLECTIONS.length; c++) if (!filled.has(c) && hasCollection(skeleton, c)) filled.set(c, COLLECTIONS[c].keyed ? {} : []);
  return replaceCollections(skeleton, filled);
}

function hasCollection(doc: Plain, c: number): boolean {
  let node: unknown = doc;
  for (const seg of COLLECTIONS[c].path) {
    if (!isPlain(node) || !Object.hasOwn(node, seg)) return false;
    node = node[seg];
  }
  return node !== undefined;
}

/** A copy of `doc` along the collections' paths with each collection in `values` replaced (key order kept). */
function replaceCollections(doc: Plain, values: ReadonlyMap<number, unknown>): Plain {
  const root: Plain = { ...doc };
  const copied = new Set<Plain>([root]);
  for (const [c, value] of values) {
    const { path } = COLLECTIONS[c];
    let node = root;
    for (let i = 0; i < path.length - 1; i++) {
      const child = node[path[i]] as Plain;
      if (copied.has(child)) {
        node = child;
        continue;
      }
      const copy = { ...child };
      copied.add(copy);
      node[path[i]] = copy;
      node = copy;
    }
    node[path[path.length - 1]] = value;
  }
  return root;
}

/**
 * A field path of a document holding only some of the items (`withItems`) as a path of the whole
 * document: list positions mapped back (`governance.virtual_keys[0]` -> `[1234]`).
 */
/** Where an item sits, as resolveRefs takes it. */
function atOf(item: Item): At {
  let at: At | undefined;
  for (const key of COLLECTIONS[item.collection].path) at = { parent: at, key };
  return { parent: at, key: item.key };
}

function wholePath(path: string, positions: ReadonlyMap<number, readonly number[]>): string {
  for (const [c, list] of positions) {
    const prefix = `${COLLECTIONS[c].path.join('.')}[`;
    if (!path.startsWith(prefix)) continue;
    const end = path.indexOf(']', prefix.length);
    const n = Number(path.slice(prefix.length, end));
    if (end < 0 || !Number.isInteger(n) || list[n] === undefined) return path;
    return `${prefix}${list[n]}${path.slice(end)}`;
  }
  return path;
}

/** Where resolveRefs is in the document: its JSON path is spelled out only for a reference (most strings are not). */
interface At {
  parent: At | undefined;
  key: string | number;
}

function pathOf(at: At | undefined): string {
  if (!at) return '';
  const up = pathOf(at.parent);
  return typeof at.key === 'number' ? `${up}[${at.key}]` : up ? `${up}.${at.key}` : at.key;
}

/**
 * `env.VAR` and `vault.<path>#<field>` in a secret-bearing section are read; one that cannot be is an
 * error naming the field and the variable or path (never a value). Elsewhere a well-formed vault
 * reference is refused rather than used as a literal: it would be sent or shown as written.
 */
function resolveRefs(value: unknown, at: At | undefined, refs: { env: NodeJS.ProcessEnv; vault: VaultLookup | undefined }, errors: FieldError[]): unknown {
  if (typeof value === 'string') {
    // Not a reference: read as written wherever it is (most strings; the path test is the cost).
    if (!isReference(value)) return value;
    const path = pathOf(at);
    if (!resolvesEnvRef(path)) {
      if (isVaultRef(value) && !('error' in parseVaultRef(value))) errors.push({ path, message: 'a vault reference is not read here: only provider keys and settings, virtual keys, auth settings, redis, store configs, MCP clients, webhooks and encryption_key take references' });
      return value;
    }
    const r = readRef(value, refs.env, refs.vault);
    if ('error' in r) errors.push({ path, message: r.error });
    return 'value' in r ? r.value : '';
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveRefs(v, { parent: at, key: i }, refs, errors));
  if (value && typeof value === 'object') {
    // A copy member by member (no `__proto__` key gets here: unsafeJson refused it first).
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) out[k] = resolveRefs((value as Record<string, unknown>)[k], { parent: at, key: k }, refs, errors);
    return out;
  }
  return value;
}

/** Array items resolved per step by resolveRefsSteps. */
const ITEMS_PER_STEP = 250;

/**
 * resolveRefs over a whole document in steps: the first levels are walked here, yielding after each
 * slice of array items (a collection of 10,000 virtual keys), deeper values by resolveRefs. The same
 * order of visits, so the same result and the same errors in the same order.
 */
function* resolveRefsSteps(value: unknown, at: At | undefined, refs: { env: NodeJS.ProcessEnv; vault: VaultLookup | undefined }, errors: FieldError[], depth: number): Generator<void, unknown> {
  if (depth >= 3 || !value || typeof value !== 'object') return resolveRefs(value, at, refs, errors);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      out.push(resolveRefs(value[i], { parent: at, key: i }, refs, errors));
      if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) out[k] = yield* resolveRefsSteps((value as Record<string, unknown>)[k], { parent: at, key: k }, refs, errors, depth + 1);
  return out;
}

/** Rules a JSON Schema cannot say: key names unique, custom providers complete, URLs parse. */
/** An HMAC key shorter than its hash gives the chain less strength than plain SHA-256 claims. */
function auditConfigErrors(config: GatewayConfig): FieldError[] {
  const key = config.audit_logs?.hmac_key;
  return key !== undefined && Buffer.byteLength(key) < 32 ? [{ path: 'audit_logs.hmac_key', message: 'must be at least 32 bytes (after its reference is read)' }] : [];
}

function semanticErrors(config: GatewayConfig): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    const at = `providers.${name}`;
    const builtIn = Object.hasOwn(PROVIDER_KINDS, name) ? PROVIDER_KINDS[name] : undefined;
    if (!builtIn && !p.custom_provider_config) {
      errors.push({ path: at, message: `unknown provider '${name}': built-in providers are ${Object.keys(PROVIDER_KINDS).join(', ')}; a custom provider needs custom_provider_config.base_provider_type` });
    }
    const pool = p.network_config?.inference_pool;
    if (p.custom_provider_config && !p.network_config?.base_url && !pool) {
      errors.push({ path: `${at}.network_config.base_url`, message: 'is required for a custom provider (or network_config.inference_pool)' });
    }
    // A pool's servers are reached at their own addresses, so only a format with no per-key endpoint or signature fits.
    const format = builtIn?.format ?? p.custom_provider_config?.base_provider_type;
    if (pool && format !== 'openai') {
      errors.push({ path: `${at}.network_config.inference_pool`, message: `is for OpenAI-compatible model servers (vllm, or a custom provider with base_provider_type openai), not a provider of format '${format}'` });
    }
    if (builtIn?.format === 'azure') errors.push(...azureConfigErrors(at, p));
    const baseUrl = p.network_config?.base_url;
    if (baseUrl) {
      try {
        const u = new URL(baseUrl);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      } catch {
        errors.push({ path: `${at}.network_config.base_url`, message: 'must be an absolute http(s) URL' });
      }
    }
    const keyless = p.custom_provider_config?.is_key_less ?? builtIn?.keyless ?? false;
    const keys = p.keys ?? [];
    if (!keyless && keys.length === 0) errors.push({ path: `${at}.keys`, message: 'needs at least one key' });
    const names = new Set<string>();
    keys.forEach((k, i) => {
      if (names.has(k.name)) errors.push({ path: `${at}.keys[${i}].name`, message: `duplicate key name '${k.name}'` });
      names.add(k.name);
      if (builtIn?.format === 'vertex') errors.push(...vertexKeyErrors(k, `${at}.keys[${i}]`));
    });
    const nc = p.network_config;
    if (nc?.retry_backoff_initial_ms !== undefined && nc.retry_backoff_max_ms !== undefined && nc.retry_backoff_initial_ms > nc.retry_backoff_max_ms) {
      errors.push({ path: `${at}.network_config.retry_backoff_max_ms`, message: 'must be >= retry_backoff_initial_ms' });
    }
  }
  return errors;
}

function unbuiltWarnings(config: GatewayConfig): string[] {
  const warnings: string[] = [];
  const record = config as Record<string, unknown>;
  for (const section of UNBUILT_SECTIONS) {
    // Plugins are named one by one (safety.ts).
    if (section !== 'plugins' && record[section] !== undefined) warnings.push(`config field '${section}' is not supported yet and is ignored`);
  }
  for (const field of ['transcript_buffer_size', 'pool'] as const) {
    if (config.websocket?.[field] !== undefined) warnings.push(`config field 'websocket.${field}' is not supported yet and is ignored`);
  }
  const client = (config.client ?? {}) as Record<string, unknown>;
  for (const field of UNBUILT_CLIENT_FIELDS) {
    if (client[field] !== undefined) warnings.push(`config field 'client.${field}' is not supported yet and is ignored`);
  }
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    for (const field of ['concurrency_and_buffer_size', 'proxy_config', 'store_raw_request_response'] as const) {
      if (p[field] !== undefined) warnings.push(`config field 'providers.${name}.${field}' is not supported yet and is ignored`);
    }
    for (const field of ['insecure_skip_verify', 'ca_cert_pem', 'beta_header_overrides'] as const) {
      if (p.network_config?.[field] !== undefined) warnings.push(`config field 'providers.${name}.network_config.${field}' is not supported yet and is ignored`);
    }
  }
  return warnings;
}
