// Video is priced per second of output at its resolution, not per token. Built-in list prices, USD
// per second, read 2026-11 from OpenAI's API pricing page (Sora) and the Gemini API pricing page
// (Veo; Vertex lists the same prices). A video's resolution class is its short side: up to 720
// pixels is `720p`, up to 1080 `1080p` (Sora 2 Pro's 1024x1792 included), above that `4k`.
// A model id falls back to its longest listed prefix ending at a separator, as token prices do
// (`sora-2-2025-10-06` → `sora-2`). Unknown: undefined (charged 0, with a warning once).
import type { PricingOverride } from '../../schema/governance.ts';
import { overrideMatches } from './pricing.ts';

export type VideoTier = '720p' | '1080p' | '4k';
type Row = Partial<Record<VideoTier, number>> & { '720p': number };

const SORA: Record<string, Row> = {
  'sora-2': { '720p': 0.1 },
  'sora-2-pro': { '720p': 0.3, '1080p': 0.5 },
};

const VEO: Record<string, Row> = {
  'veo-3.1-generate-preview': { '720p': 0.4, '1080p': 0.4, '4k': 0.6 },
  'veo-3.1-fast-generate-preview': { '720p': 0.15, '1080p': 0.15, '4k': 0.35 },
  'veo-3.1-generate': { '720p': 0.4, '1080p': 0.4, '4k': 0.6 },
  'veo-3.1-fast-generate': { '720p': 0.15, '1080p': 0.15, '4k': 0.35 },
  'veo-3.0-generate': { '720p': 0.4, '1080p': 0.4 },
  'veo-3.0-fast-generate': { '720p': 0.15, '1080p': 0.15 },
  'veo-2.0-generate': { '720p': 0.35 },
};

/** By provider; providers without their own table (custom, Azure) are priced by the first that knows the model. */
const VIDEO_PRICES: Readonly<Record<string, Readonly<Record<string, Row>>>> = { openai: SORA, gemini: VEO, vertex: VEO };
const SEPARATORS = new Set(['-', '@', ':', '/']);

/** The model ids the built-in video list prices for `provider`. */
export function videoModels(provider: string): string[] {
  return Object.keys(VIDEO_PRICES[provider] ?? {});
}

export function videoTier(size: string): VideoTier {
  const m = /^(\d+)x(\d+)$/.exec(size);
  const short = m ? Math.min(Number(m[1]), Number(m[2])) : 720;
  return short <= 720 ? '720p' : short <= 1080 ? '1080p' : '4k';
}

function rowOf(table: Readonly<Record<string, Row>>, model: string): Row | undefined {
  if (table[model]) return table[model];
  let best: string | undefined;
  for (const name of Object.keys(table)) {
    if (model.length > name.length && model.startsWith(name) && SEPARATORS.has(model[name.length]) && (!best || name.length > best.length)) best = name;
  }
  return best ? table[best] : undefined;
}

/** USD per second of provider/model at `size`; a tier the row does not list costs its nearest lower one. */
export function videoPricePerSecond(provider: string, rawModel: string, size: string): number | undefined {
  const model = rawModel.toLowerCase().replace(/^models\//, '');
  const tables = VIDEO_PRICES[provider] ? [VIDEO_PRICES[provider]] : Object.values(VIDEO_PRICES);
  for (const t of tables) {
    const row = rowOf(t, model);
    if (!row) continue;
    const tier = videoTier(size);
    return row[tier] ?? (tier === '4k' ? (row['1080p'] ?? row['720p']) : row['720p']);
  }
  return undefined;
}

/**
 * What a finished video costs: seconds × the per-second price (a failed job costs nothing). A
 * provider's `pricing_overrides` entry for the model with `request_types` naming this request type
 * (or none) replaces the price: its `output_cost_per_token` is read as USD per second of video.
 */
export function videoCost(provider: string, model: string, seconds: string, size: string, requestType: string, overrides?: readonly PricingOverride[]): number | undefined {
  const n = Number(seconds);
  if (!Number.isFinite(n) || n <= 0) return 0;
  const o = overrides?.find((x) => overrideMatches(x, model, requestType));
  const perSecond = o?.output_cost_per_token ?? videoPricePerSecond(provider, model, size);
  return perSecond === undefined ? undefined : n * perSecond;
}
