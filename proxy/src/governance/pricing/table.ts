// Built-in list prices, USD per 1M tokens: [input, output, cache read, cache write]. A missing cache
// price means the provider bills those tokens as ordinary input (OpenAI-style caches charge nothing
// extra to write; providers without a cache discount charge full input to read).
//
// Compiled 2026-11-21 from the providers' public price lists (stored copies of their pricing pages;
// the date each was read is noted per provider). Standard (non-batch, non-priority) tier, prompts
// under any long-context threshold. Prices change: operators correct or extend them per provider
// with `pricing_overrides`. Names are model ids as the provider's API takes them; a dated or
// suffixed id (`gpt-4o-2024-08-06`) falls back to its longest listed prefix (pricing.ts).
export type PriceRow = readonly [input: number, output: number, cacheRead?: number, cacheWrite?: number];

// Anthropic: platform.claude.com pricing page (read 2026-11). Cache write = 5-minute writes (1.25x
// input); 1-hour writes (2x) are not distinguished in usage we receive.
const ANTHROPIC: Record<string, PriceRow> = {
  'claude-opus-5': [5, 25, 0.5, 6.25],
  'claude-opus-4-8': [5, 25, 0.5, 6.25],
  'claude-opus-4-7': [5, 25, 0.5, 6.25],
  'claude-opus-4-6': [5, 25, 0.5, 6.25],
  'claude-opus-4-5': [5, 25, 0.5, 6.25],
  'claude-opus-4-1': [15, 75, 1.5, 18.75],
  'claude-opus-4': [15, 75, 1.5, 18.75],
  'claude-3-opus': [15, 75, 1.5, 18.75],
  'claude-sonnet-5': [2, 10, 0.2, 2.5],
  'claude-sonnet-4-6': [3, 15, 0.3, 3.75],
  'claude-sonnet-4-5': [3, 15, 0.3, 3.75],
  'claude-sonnet-4': [3, 15, 0.3, 3.75],
  'claude-3-7-sonnet': [3, 15, 0.3, 3.75],
  'claude-3-5-sonnet': [3, 15, 0.3, 3.75],
  'claude-haiku-4-5': [1, 5, 0.1, 1.25],
  'claude-3-5-haiku': [0.8, 4, 0.08, 1],
  'claude-3-haiku': [0.25, 1.25, 0.03, 0.3],
};

export const PRICES: Readonly<Record<string, Readonly<Record<string, PriceRow>>>> = {
  // OpenAI: developers.openai.com/api/docs/pricing (read 2026-11). Cached input as listed.
  openai: {
    'gpt-5.5': [5, 30, 0.5],
    'gpt-5.5-pro': [30, 180],
    'gpt-5.4': [2.5, 15, 0.25],
    'gpt-5.4-mini': [0.75, 4.5, 0.075],
    'gpt-5.4-nano': [0.2, 1.25, 0.02],
    'gpt-5.4-pro': [30, 180],
    'gpt-5.1': [1.25, 10, 0.125],
    'gpt-5': [1.25, 10, 0.125],
    'gpt-5-mini': [0.25, 2, 0.025],
    'gpt-5-nano': [0.05, 0.4, 0.005],
    'gpt-5-pro': [15, 120],
    'gpt-4.1': [2, 8, 0.5],
    'gpt-4.1-mini': [0.4, 1.6, 0.1],
    'gpt-4.1-nano': [0.1, 0.4, 0.025],
    'gpt-4o': [2.5, 10, 1.25],
    // The first gpt-4o snapshot kept its launch price.
    'gpt-4o-2024-05-13': [5, 15],
    'gpt-4o-mini': [0.15, 0.6, 0.075],
    'gpt-4-turbo': [10, 30],
    'gpt-4': [30, 60],
    'gpt-3.5-turbo': [0.5, 1.5],
    'gpt-3.5-turbo-instruct': [1.5, 2],
    o1: [15, 60, 7.5],
    'o1-mini': [1.1, 4.4, 0.55],
    'o1-pro': [150, 600],
    o3: [2, 8, 0.5],
    'o3-mini': [1.1, 4.4, 0.55],
    'o3-pro': [20, 80],
    'o4-mini': [1.1, 4.4, 0.275],
    'text-embedding-3-small': [0.02, 0],
    'text-embedding-3-large': [0.13, 0],
    'text-embedding-ada-002': [0.1, 0],
  },
  anthropic: ANTHROPIC,
  // Gemini API (ai.google.dev pricing, read 2026-11), paid tier, prompts up to 200k tokens. Context
  // cache storage (per hour) is not a token price and is not charged here.
  gemini: {
    'gemini-3-pro': [2, 12, 0.2],
    'gemini-2.5-pro': [1.25, 10, 0.125],
    'gemini-2.5-flash': [0.3, 2.5, 0.03],
    'gemini-2.5-flash-lite': [0.1, 0.4, 0.01],
    'gemini-2.0-flash': [0.1, 0.4, 0.025],
    'gemini-2.0-flash-lite': [0.075, 0.3],
    'gemini-1.5-pro': [1.25, 5],
    'gemini-1.5-flash': [0.075, 0.3],
    'gemini-embedding-001': [0.15, 0],
    'text-embedding-004': [0, 0],
  },
  // Mistral La Plateforme (mistral.ai/pricing, read 2026-06). `-latest` aliases follow the model
  // they pointed at then (Large 3, Medium 3.5, Small 4); dated ids keep their own price.
  mistral: {
    'mistral-large': [0.5, 1.5],
    'mistral-large-2411': [2, 6],
    'mistral-large-2407': [2, 6],
    'mistral-medium-latest': [1.5, 7.5],
    'mistral-medium': [0.4, 2],
    'mistral-small': [0.1, 0.3],
    'magistral-medium': [2, 5],
    'magistral-small': [0.5, 1.5],
    codestral: [0.3, 0.9],
    devstral: [0.4, 2],
    'devstral-small': [0.1, 0.3],
    'ministral-8b': [0.15, 0.15],
    'ministral-3b': [0.1, 0.1],
    'open-mistral-nemo': [0.15, 0.15],
    'pixtral-large': [2, 6],
    'mistral-embed': [0.1, 0],
  },
  // Groq (groq.com/pricing, read 2026-06).
  groq: {
    'llama-3.3-70b-versatile': [0.59, 0.79],
    'llama-3.1-8b-instant': [0.05, 0.08],
    'meta-llama/llama-4-scout-17b-16e-instruct': [0.11, 0.34],
    'meta-llama/llama-4-maverick-17b-128e-instruct': [0.2, 0.6],
    'openai/gpt-oss-120b': [0.15, 0.6, 0.075],
    'openai/gpt-oss-20b': [0.075, 0.3, 0.0375],
    'qwen/qwen3-32b': [0.29, 0.59],
    'moonshotai/kimi-k2-instruct': [1, 3],
  },
  // xAI (docs.x.ai pricing and models pages, read 2026-11; older models as listed 2025-10).
  xai: {
    'grok-4.3': [1.25, 2.5, 0.2],
    'grok-4.20': [1.25, 2.5, 0.2],
    'grok-4-1-fast': [0.2, 0.5, 0.05],
    'grok-4-fast': [0.2, 0.5, 0.05],
    'grok-4': [3, 15, 0.75],
    'grok-code-fast-1': [0.2, 1.5, 0.02],
    'grok-3': [3, 15, 0.75],
    'grok-3-fast': [5, 25, 1.25],
    'grok-3-mini': [0.3, 0.5, 0.075],
    'grok-3-mini-fast': [0.6, 4, 0.15],
  },
  // DeepSeek (api-docs.deepseek.com pricing, DeepSeek-V3.2 rates from 2025-09-29): cache hit = read.
  // Newer time-of-day (peak/off-peak) prices are not modelled: override them.
  deepseek: {
    'deepseek-chat': [0.28, 0.42, 0.028],
    'deepseek-reasoner': [0.28, 0.42, 0.028],
  },
  // Cohere (cohere.com/pricing, read 2025-10). Rerank is priced per search, not per token: absent.
  cohere: {
    'command-a': [2.5, 10],
    'command-r-plus': [2.5, 10],
    'command-r-plus-04-2024': [3, 15],
    'command-r': [0.15, 0.6],
    'command-r-03-2024': [0.5, 1.5],
    'command-r7b': [0.0375, 0.15],
    'embed-v4.0': [0.12, 0],
    'embed-english-v3.0': [0.1, 0],
    'embed-multilingual-v3.0': [0.1, 0],
    'embed-english-light-v3.0': [0.1, 0],
    'embed-multilingual-light-v3.0': [0.1, 0],
  },
  // Bedrock on-demand (aws.amazon.com/bedrock/pricing, us-east-1, read 2025-10): Claude at
  // Anthropic's own prices; cross-region profile prefixes (`us.`, `eu.`, `global.`) are stripped.
  bedrock: {
    ...Object.fromEntries(Object.entries(ANTHROPIC).map(([k, v]) => [`anthropic.${k}`, v])),
    'amazon.nova-premier': [2.5, 12.5],
    'amazon.nova-pro': [0.8, 3.2, 0.2],
    'amazon.nova-lite': [0.06, 0.24, 0.015],
    'amazon.nova-micro': [0.035, 0.14, 0.00875],
    'amazon.titan-text-express': [0.2, 0.6],
    'amazon.titan-text-lite': [0.15, 0.2],
  },
};

/**
 * Per-page prices of document OCR, USD per 1,000 pages (standard, not batch). Mistral
 * (mistral.ai/pricing and the OCR 3 launch, read 2026-11): OCR 25.05 at $1, OCR 3 (25.12) at $2;
 * `mistral-ocr-latest` is priced as OCR 3. Newer models or prices: `ocr_cost_per_page` overrides.
 */
export const PAGE_PRICES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  mistral: {
    'mistral-ocr-latest': 2,
    'mistral-ocr-2512': 2,
    'mistral-ocr-2505': 1,
    'mistral-ocr-2503': 1,
  },
};

/** Providers whose own list prices apply to first-party model ids served elsewhere (Vertex, Azure, custom providers). */
export const FIRST_PARTY = ['openai', 'anthropic', 'gemini', 'mistral', 'xai', 'deepseek', 'cohere'] as const;

/** Self-hosted providers: no list price, and no first-party price applies to what they serve. */
export const SELF_HOSTED = new Set(['ollama', 'vllm']);
