// The shape of the prices in force as GET /api/governance/pricing answers them (in-force.ts builds
// them). Types only, importing nothing: api/answers.ts re-exports them to the dashboard.

/** Where a model's price comes from: the built-in list, an override, or nowhere (its requests cost 0). */
export type PriceSource = 'builtin' | 'override' | 'none';

/** Video resolution classes priced per second. */
export type VideoTierName = '720p' | '1080p' | '4k';

export interface PriceInForce {
  provider: string;
  model: string;
  /** The provider is configured on this gateway (the built-in list names others' models too). */
  configured: boolean;
  source: PriceSource;
  /** USD per 1M tokens (absent: not priced per token). */
  input_per_million?: number;
  output_per_million?: number;
  cache_read_per_million?: number;
  cache_write_per_million?: number;
  /** USD per page (document OCR). */
  per_page?: number;
  /** USD per second of video, by resolution. */
  per_second?: Partial<Record<VideoTierName, number>>;
  /** The override in force: a governance record (`id`, written through /api) or an entry of the provider's own `pricing_overrides` (`index`, config.json's). */
  override?: { id?: string; index?: number; provider?: string; model_pattern: string; match_type: string; request_types?: string[] };
  /** Why the gateway knows the model: the built-in list, a provider key's or virtual key's models, the provider's model list, an override's exact pattern. */
  known_from: ('builtin' | 'configured' | 'listed' | 'override')[];
}

export interface PricesInForce {
  models: PriceInForce[];
  total: number;
  /** Models of configured providers with no price: their requests cost 0. */
  unpriced: number;
}
