// The price in force for every model the gateway knows, and where it comes from: what the
// dashboard's Models & pricing page lists. Pure: the caller hands over the configured providers
// with the models it knows of them, and the overrides. Prices are those the request path charges
// (pricing.ts, video.ts), so the page cannot disagree with the log records.
import type { PricingOverride, PricingOverrideRecord } from '../../schema/governance.ts';
import { builtinPrice, overrideMatches, pagePriceOf, priceOf } from './pricing.ts';
import { PAGE_PRICES, PRICES } from './table.ts';
import { videoModels, videoPricePerSecond } from './video.ts';
import type { PriceInForce, PricesInForce, VideoTierName } from './view.ts';

export interface KnownProvider {
  name: string;
  /** Model ids named in its configuration (keys' and virtual keys' model lists). */
  configured: readonly string[];
  /** Model ids its list-models answered (empty when it has none or it failed). */
  listed: readonly string[];
}

export interface PricingInput {
  providers: readonly KnownProvider[];
  /** governance.pricing_overrides, in order. */
  records: readonly PricingOverrideRecord[];
  /** providers.<name>.pricing_overrides. */
  providerOverrides: Readonly<Record<string, readonly PricingOverride[] | undefined>>;
}

/** A size of each resolution class, for the per-second price the request path would charge. */
const TIER_SIZES: readonly (readonly [VideoTierName, string])[] = [
  ['720p', '1280x720'],
  ['1080p', '1920x1080'],
  ['4k', '3840x2160'],
];

const PER_MILLION = 1_000_000;
/** Per-token prices as per-million ones, without float noise (0.15e-6 * 1e6 = 0.15000000000000002). */
const perMillion = (usd: number): number => Number((usd * PER_MILLION).toPrecision(12));

type Candidate = { o: PricingOverride; id?: string; index?: number; provider?: string };

/** The overrides tried for `provider`, in the order the request path tries them. */
function candidatesOf(provider: string, input: PricingInput): Candidate[] {
  const out: Candidate[] = [];
  for (const r of input.records) {
    if (r.provider !== undefined && r.provider !== provider) continue;
    const { id, provider: scope, ...o } = r;
    out.push({ o, id, ...(scope !== undefined && { provider: scope }) });
  }
  (input.providerOverrides[provider] ?? []).forEach((o, index) => out.push({ o, index }));
  return out;
}

/** The first override whose pattern matches the model, whatever request types it is limited to (shown with it). */
function overrideFor(model: string, candidates: readonly Candidate[]): Candidate | undefined {
  return candidates.find((c) => overrideMatches(c.o.request_types?.length ? { ...c.o, request_types: undefined } : c.o, model));
}

export function pricesInForce(input: PricingInput): PricesInForce {
  const configured = new Map(input.providers.map((p) => [p.name, p]));
  const names = new Set([...configured.keys(), ...Object.keys(PRICES), ...Object.keys(PAGE_PRICES)]);
  const rows: PriceInForce[] = [];
  for (const provider of [...names].sort()) {
    const known = new Map<string, Set<PriceInForce['known_from'][number]>>();
    const add = (model: string, from: PriceInForce['known_from'][number]) => {
      let set = known.get(model);
      if (!set) known.set(model, (set = new Set()));
      set.add(from);
    };
    for (const m of Object.keys(PRICES[provider] ?? {})) add(m, 'builtin');
    for (const m of Object.keys(PAGE_PRICES[provider] ?? {})) add(m, 'builtin');
    for (const m of videoModels(provider)) add(m, 'builtin');
    const p = configured.get(provider);
    // Overrides apply to configured providers only (the request path never prices the others).
    const candidates = p ? candidatesOf(provider, input) : [];
    if (p) {
      for (const m of p.configured) add(m, 'configured');
      for (const m of p.listed) add(m, 'listed');
      for (const c of candidates) if (c.o.match_type === 'exact') add(c.o.model_pattern, 'override');
    }
    for (const [model, from] of known) rows.push(priceRow(provider, model, p !== undefined, [...from], candidates));
  }
  return { models: rows, total: rows.length, unpriced: rows.filter((r) => r.configured && r.source === 'none').length };
}

function priceRow(provider: string, model: string, isConfigured: boolean, knownFrom: PriceInForce['known_from'], candidates: readonly Candidate[]): PriceInForce {
  const hit = overrideFor(model, candidates);
  const row: PriceInForce = { provider, model, configured: isConfigured, source: 'none', known_from: knownFrom };
  const builtin = builtinPrice(provider, model);
  const token = hit ? priceOf(provider, model, [{ ...hit.o, request_types: undefined }]) : builtin;
  // An override that sets no token price on a model without one (an OCR or video price) adds none.
  if (token && (builtin || hit?.o.input_cost_per_token !== undefined || hit?.o.output_cost_per_token !== undefined)) {
    row.input_per_million = perMillion(token.input);
    row.output_per_million = perMillion(token.output);
    row.cache_read_per_million = perMillion(token.cacheRead);
    row.cache_write_per_million = perMillion(token.cacheWrite);
  }
  const page = pagePriceOf(provider, model, hit ? [{ ...hit.o, request_types: undefined }] : undefined);
  if (page !== undefined) row.per_page = page;
  const video: Partial<Record<VideoTierName, number>> = {};
  for (const [tier, size] of TIER_SIZES) {
    const perSecond = videoPricePerSecond(provider, model, size);
    // A video override's output_cost_per_token is read as USD per second (video.ts).
    if (perSecond !== undefined) video[tier] = hit?.o.output_cost_per_token ?? perSecond;
  }
  if (Object.keys(video).length) {
    row.per_second = video;
    // A video model is not priced per token.
    delete row.input_per_million;
    delete row.output_per_million;
    delete row.cache_read_per_million;
    delete row.cache_write_per_million;
  }
  const priced = row.input_per_million !== undefined || row.per_page !== undefined || row.per_second !== undefined;
  if (hit && priced) row.source = 'override';
  else if (priced) row.source = 'builtin';
  if (hit) {
    row.override = {
      ...(hit.id !== undefined && { id: hit.id }),
      ...(hit.index !== undefined && { index: hit.index }),
      ...(hit.provider !== undefined && { provider: hit.provider }),
      model_pattern: hit.o.model_pattern,
      match_type: hit.o.match_type,
      ...(hit.o.request_types?.length && { request_types: hit.o.request_types }),
    };
  }
  return row;
}
