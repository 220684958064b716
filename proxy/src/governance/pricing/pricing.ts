// What a request costs: the built-in list price of provider/model (table.ts), corrected by the
// provider's `pricing_overrides`, applied to the usage the answer reported.
//
// Lookup of a built-in price, model ids compared case-insensitively:
// 1. the exact id; else the longest listed id that is a prefix of it ending at a separator
//    (`-`, `@`, `:`, `/`): `gpt-4o-2024-08-06` -> `gpt-4o`, `claude-sonnet-4-20250514` ->
//    `claude-sonnet-4`; `gpt-4.5` does not fall back to `gpt-4`.
// 2. Gemini's `models/` prefix and Bedrock's cross-region profile prefix (`us.`, `global.`) are ignored.
// 3. A provider without a table of its own (Vertex, Azure, custom providers) is priced by the
//    first-party table that knows the model (`claude-sonnet-4-5@20250929` on Vertex is Anthropic's
//    price; `openai/gpt-4o` via an aggregator is OpenAI's). Self-hosted ollama/vllm are not.
// Unknown: undefined (the caller charges 0 and warns).
import type { PricingOverride } from '../../schema/governance.ts';
import { FIRST_PARTY, PAGE_PRICES, PRICES, SELF_HOSTED, type PriceRow } from './table.ts';

/** USD per token. */
export interface Price {
  input: number;
  output: number;
  /** Prompt tokens served from the provider's cache. */
  cacheRead: number;
  /** Prompt tokens written to the provider's cache (Anthropic charges a premium). */
  cacheWrite: number;
}

export interface TokenUsage {
  /** All prompt tokens, cached ones included (OpenAI's convention, and the unified usage's). */
  prompt_tokens: number;
  completion_tokens: number;
  /** Of prompt_tokens, read from cache. */
  cached_read_tokens?: number;
  /** Of prompt_tokens, written to cache. */
  cached_write_tokens?: number;
}

const PER_MILLION = 1e-6;
const SEPARATORS = new Set(['-', '@', ':', '/']);
const BEDROCK_PROFILE = /^(?:us|eu|apac|ap|jp|au|ca|us-gov|global)\./;

function rowPrice(row: PriceRow): Price {
  const input = row[0] * PER_MILLION;
  return {
    input,
    output: row[1] * PER_MILLION,
    cacheRead: row[2] === undefined ? input : row[2] * PER_MILLION,
    cacheWrite: row[3] === undefined ? input : row[3] * PER_MILLION,
  };
}

/** Lower-cased names per provider, longest first, so the first prefix hit is the longest. */
const tables = new Map<string, { exact: Map<string, Price>; byLength: string[] }>();
for (const [provider, rows] of Object.entries(PRICES)) {
  const exact = new Map<string, Price>();
  for (const [name, row] of Object.entries(rows)) exact.set(name.toLowerCase(), rowPrice(row));
  tables.set(provider, { exact, byLength: [...exact.keys()].sort((a, b) => b.length - a.length) });
}

function fromTable(provider: string, model: string): Price | undefined {
  const t = tables.get(provider);
  if (!t) return undefined;
  const hit = t.exact.get(model);
  if (hit) return hit;
  for (const name of t.byLength) {
    if (name.length < model.length && model.startsWith(name) && SEPARATORS.has(model[name.length])) return t.exact.get(name);
  }
  return undefined;
}

const builtinCache = new Map<string, Price | null>();

/** The built-in list price of provider/model, or undefined. */
export function builtinPrice(provider: string, model: string): Price | undefined {
  const id = `${provider}\u0000${model}`;
  const cached = builtinCache.get(id);
  if (cached !== undefined) return cached ?? undefined;
  const found = lookup(provider, model);
  // Model names come from requests: bound the memo so arbitrary names cannot grow it forever.
  if (builtinCache.size >= 10_000) builtinCache.clear();
  builtinCache.set(id, found ?? null);
  return found;
}

function lookup(provider: string, rawModel: string): Price | undefined {
  let model = rawModel.toLowerCase();
  if (model.startsWith('models/')) model = model.slice(7);
  if (provider === 'bedrock') model = model.replace(BEDROCK_PROFILE, '');
  if (tables.has(provider)) return fromTable(provider, model);
  if (SELF_HOSTED.has(provider)) return undefined;
  // An aggregator's `vendor/model`: try the model id alone too.
  const slash = model.indexOf('/');
  const candidates = slash > 0 ? [model, model.slice(slash + 1)] : [model];
  for (const m of candidates) {
    for (const p of FIRST_PARTY) {
      const price = fromTable(p, m);
      if (price) return price;
    }
  }
  return undefined;
}

const compiled = new WeakMap<PricingOverride, RegExp | null>();

function patternOf(o: PricingOverride): RegExp | null {
  let re = compiled.get(o);
  if (re !== undefined) return re;
  re = null;
  try {
    if (o.match_type === 'regex') re = new RegExp(o.model_pattern);
    else if (o.match_type === 'wildcard') re = new RegExp(`^${o.model_pattern.split('*').map(escapeRegex).join('.*')}$`);
  } catch {
    re = null;
  }
  compiled.set(o, re);
  return re;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A problem with an override that config validation should report, or undefined when it is usable. */
export function overrideProblem(o: PricingOverride): string | undefined {
  if (o.match_type !== 'regex') return undefined;
  try {
    new RegExp(o.model_pattern);
    return undefined;
  } catch (err) {
    return `pricing override model_pattern '${o.model_pattern}' is not a valid regular expression: ${(err as Error).message}`;
  }
}

/**
 * Whether an override applies to model (and request type). exact: equal; wildcard: `*` matches any
 * run of characters, the rest literally, whole name; regex: a JavaScript RegExp tested against the
 * name (unanchored: write `^...$` to anchor). With `request_types`, only those request types match
 * (a call that names no request type matches no such override).
 */
export function overrideMatches(o: PricingOverride, model: string, requestType?: string): boolean {
  if (o.request_types && o.request_types.length > 0 && (requestType === undefined || !o.request_types.includes(requestType))) return false;
  if (o.match_type === 'exact') return o.model_pattern === model;
  const re = patternOf(o);
  return re !== null && re.test(model);
}

/**
 * The price of provider/model. The first matching override (in list order) wins; the prices it
 * sets replace the built-in ones, the others keep the built-in value (or, with no built-in price:
 * 0 for input/output, the input price for cache reads and writes).
 */
export function priceOf(provider: string, model: string, overrides?: readonly PricingOverride[], requestType?: string): Price | undefined {
  const base = builtinPrice(provider, model);
  const o = overrides?.find((x) => overrideMatches(x, model, requestType));
  if (!o) return base;
  const input = o.input_cost_per_token ?? base?.input ?? 0;
  return {
    input,
    output: o.output_cost_per_token ?? base?.output ?? 0,
    cacheRead: o.cache_read_input_token_cost ?? base?.cacheRead ?? input,
    cacheWrite: o.cache_creation_input_token_cost ?? base?.cacheWrite ?? input,
  };
}

/** USD for usage at price. Cached tokens are part of prompt_tokens and priced at their own rate. */
export function costOf(price: Price, usage: TokenUsage): number {
  const n = (v: number | undefined) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  const prompt = n(usage.prompt_tokens);
  const read = Math.min(n(usage.cached_read_tokens), prompt);
  const write = Math.min(n(usage.cached_write_tokens), prompt - read);
  const fresh = prompt - read - write;
  return fresh * price.input + read * price.cacheRead + write * price.cacheWrite + n(usage.completion_tokens) * price.output;
}

/**
 * USD per page of document OCR for provider/model: the first matching override's
 * `ocr_cost_per_page`, else the built-in price (PAGE_PRICES; a dated id falls back to its longest
 * listed prefix, a provider without a table of its own to the first-party one that lists the model).
 */
export function pagePriceOf(provider: string, model: string, overrides?: readonly PricingOverride[], requestType?: string): number | undefined {
  const o = overrides?.find((x) => x.ocr_cost_per_page !== undefined && overrideMatches(x, model, requestType));
  if (o) return o.ocr_cost_per_page;
  const id = model.toLowerCase();
  const tables = Object.hasOwn(PAGE_PRICES, provider) ? [PAGE_PRICES[provider]] : SELF_HOSTED.has(provider) ? [] : Object.values(PAGE_PRICES);
  for (const table of tables) {
    const names = Object.keys(table).sort((a, b) => b.length - a.length);
    const hit = names.find((n) => n === id || (id.startsWith(n) && SEPARATORS.has(id[n.length])));
    if (hit) return table[hit] / 1000;
  }
  return undefined;
}
