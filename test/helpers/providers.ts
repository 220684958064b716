// Provider blocks for the mock provider (test/mock-provider), written once: the mock plays each
// format under /<format>, with one key per provider and no retries, so a test reads as what it
// changes (`overrides`) instead of a copy of the block.
export type ProviderOverrides = Record<string, Record<string, unknown>>;

/** One provider served by the mock in `format`, named `name` (its key is `<name>-key`, `sk-<name>-test`). */
export function mockProvider(mockUrl: string, format: string, overrides: Record<string, unknown> = {}, name = format): Record<string, unknown> {
  return {
    keys: [{ name: `${name}-key`, value: `sk-${name}-test`, weight: 1 }],
    network_config: { base_url: `${mockUrl}/${format}`, max_retries: 0 },
    ...overrides,
  };
}

/** openai, anthropic and gemini on the mock, each with its `overrides[name]`. */
export function mockProviders(mockUrl: string, overrides: ProviderOverrides = {}): Record<string, unknown> {
  const provider = (format: string) => mockProvider(mockUrl, format, overrides[format]);
  return { openai: provider('openai'), anthropic: provider('anthropic'), gemini: provider('gemini') };
}

/** The model each mock format answers for, as `provider/model`. */
export const MODELS = {
  openai: 'openai/gpt-4o',
  anthropic: 'anthropic/claude-sonnet-4-5',
  gemini: 'gemini/gemini-2.5-flash',
} as const;

export const FORMATS = ['openai', 'anthropic', 'gemini'] as const;
