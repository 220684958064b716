import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PricingOverride } from '../../proxy/src/schema/governance.ts';
import { costOf, overrideMatches, overrideProblem, priceOf, type Price } from '../../proxy/src/governance/pricing/pricing.ts';
import { containerSessionCost } from '../../proxy/src/governance/pricing/containers.ts';
import { ANTHROPIC_MODELS, GEMINI_MODELS, OPENAI_MODELS } from '../mock-provider/models.ts';
import { MODELS } from '../helpers/providers.ts';

const M = 1e-6;
/** Compares per-token prices after scaling to per-million, where the table's numbers live. */
function perMillion(p: Price | undefined): [number, number, number, number] | undefined {
  if (!p) return undefined;
  const r = (v: number) => Math.round(v * 1e6 * 1e6) / 1e6;
  return [r(p.input), r(p.output), r(p.cacheRead), r(p.cacheWrite)];
}

test('every model the mock provider serves has a price', () => {
  for (const m of Object.values(MODELS)) {
    const [provider, model] = m.split('/');
    assert.ok(priceOf(provider, model), m);
  }
  for (const m of OPENAI_MODELS) assert.ok(priceOf('openai', m.id), m.id);
  for (const m of ANTHROPIC_MODELS) assert.ok(priceOf('anthropic', m.id), m.id);
  for (const m of GEMINI_MODELS) assert.ok(priceOf('gemini', m.baseModelId), m.baseModelId);
  for (const id of ['command-r-plus', 'command-r', 'command-a-03-2025', 'embed-english-v3.0', 'embed-v4.0']) assert.ok(priceOf('cohere', id), id);
  for (const id of ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'amazon.titan-text-express-v1']) assert.ok(priceOf('bedrock', id), id);
});

test('list prices of common models (USD per 1M: input, output, cache read, cache write)', () => {
  assert.deepEqual(perMillion(priceOf('openai', 'gpt-4o')), [2.5, 10, 1.25, 2.5]);
  assert.deepEqual(perMillion(priceOf('openai', 'gpt-4o-mini')), [0.15, 0.6, 0.075, 0.15]);
  assert.deepEqual(perMillion(priceOf('anthropic', 'claude-sonnet-4-5')), [3, 15, 0.3, 3.75]);
  assert.deepEqual(perMillion(priceOf('anthropic', 'claude-haiku-4-5')), [1, 5, 0.1, 1.25]);
  assert.deepEqual(perMillion(priceOf('gemini', 'gemini-2.5-flash')), [0.3, 2.5, 0.03, 0.3]);
  assert.deepEqual(perMillion(priceOf('deepseek', 'deepseek-chat')), [0.28, 0.42, 0.028, 0.28]);
  assert.deepEqual(perMillion(priceOf('groq', 'llama-3.3-70b-versatile')), [0.59, 0.79, 0.59, 0.59]);
  assert.deepEqual(perMillion(priceOf('xai', 'grok-4-0709')), [3, 15, 0.75, 3]);
  assert.deepEqual(perMillion(priceOf('mistral', 'mistral-small-latest')), [0.1, 0.3, 0.1, 0.1]);
  assert.deepEqual(perMillion(priceOf('cohere', 'command-r-plus-08-2024')), [2.5, 10, 2.5, 2.5]);
});

test('dated and suffixed ids fall back to the longest listed prefix that ends at a separator', () => {
  assert.deepEqual(priceOf('openai', 'gpt-4o-2024-08-06'), priceOf('openai', 'gpt-4o'));
  assert.deepEqual(priceOf('openai', 'gpt-4o-mini-2024-07-18'), priceOf('openai', 'gpt-4o-mini'));
  assert.deepEqual(priceOf('openai', 'gpt-4.1-mini-2025-04-14'), priceOf('openai', 'gpt-4.1-mini'));
  assert.deepEqual(priceOf('openai', 'gpt-5-codex'), priceOf('openai', 'gpt-5'));
  // An exact entry beats the prefix: the first gpt-4o snapshot kept its launch price.
  assert.deepEqual(perMillion(priceOf('openai', 'gpt-4o-2024-05-13')), [5, 15, 5, 5]);
  assert.deepEqual(priceOf('anthropic', 'claude-sonnet-4-5-20250929'), priceOf('anthropic', 'claude-sonnet-4-5'));
  assert.deepEqual(priceOf('anthropic', 'claude-sonnet-4-20250514'), priceOf('anthropic', 'claude-sonnet-4-0'));
  assert.deepEqual(perMillion(priceOf('anthropic', 'claude-3-5-haiku-20241022')), [0.8, 4, 0.08, 1]);
  assert.deepEqual(priceOf('anthropic', 'claude-opus-4-1-20250805'), priceOf('anthropic', 'claude-opus-4-1'));
  assert.deepEqual(priceOf('gemini', 'gemini-2.5-flash-lite-preview-09-2025'), priceOf('gemini', 'gemini-2.5-flash-lite'));
  assert.deepEqual(priceOf('gemini', 'models/gemini-2.5-pro'), priceOf('gemini', 'gemini-2.5-pro'));
  assert.deepEqual(priceOf('xai', 'grok-4-1-fast-reasoning'), priceOf('xai', 'grok-4-1-fast'));
  assert.deepEqual(priceOf('cohere', 'command-r7b-12-2024'), priceOf('cohere', 'command-r7b'));
  assert.notDeepEqual(priceOf('cohere', 'command-r7b-12-2024'), priceOf('cohere', 'command-r'));
  // Case does not matter.
  assert.deepEqual(priceOf('openai', 'GPT-4o'), priceOf('openai', 'gpt-4o'));
});

test('a prefix that does not end at a separator is a different model: unknown, not a wrong price', () => {
  assert.equal(priceOf('openai', 'gpt-4.5-preview'), undefined);
  assert.equal(priceOf('openai', 'gpt-4omega'), undefined);
  assert.equal(priceOf('openai', 'o3x'), undefined);
  assert.equal(priceOf('openai', 'no-such-model'), undefined);
  assert.equal(priceOf('anthropic', 'claude-haiku-5-5'), undefined);
});

test('bedrock: Claude at Anthropic prices, with or without a cross-region profile prefix', () => {
  const sonnet = priceOf('anthropic', 'claude-3-5-sonnet');
  assert.deepEqual(priceOf('bedrock', 'anthropic.claude-3-5-sonnet-20240620-v1:0'), sonnet);
  assert.deepEqual(priceOf('bedrock', 'us.anthropic.claude-3-5-sonnet-20240620-v1:0'), sonnet);
  assert.deepEqual(priceOf('bedrock', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0'), priceOf('anthropic', 'claude-sonnet-4-5'));
  assert.deepEqual(perMillion(priceOf('bedrock', 'amazon.nova-pro-v1:0')), [0.8, 3.2, 0.2, 0.8]);
});

test('providers without a table use the first-party price of the model; self-hosted ones have none', () => {
  assert.deepEqual(priceOf('vertex', 'claude-sonnet-4-5@20250929'), priceOf('anthropic', 'claude-sonnet-4-5'));
  assert.deepEqual(priceOf('vertex', 'gemini-2.5-flash'), priceOf('gemini', 'gemini-2.5-flash'));
  assert.deepEqual(priceOf('my-openai', 'gpt-4o'), priceOf('openai', 'gpt-4o'));
  assert.deepEqual(priceOf('openrouter', 'openai/gpt-4o-mini'), priceOf('openai', 'gpt-4o-mini'));
  assert.equal(priceOf('ollama', 'gpt-4o'), undefined);
  assert.equal(priceOf('vllm', 'claude-sonnet-4-5'), undefined);
  // A provider with its own table does not borrow another's.
  assert.equal(priceOf('groq', 'gpt-4o'), undefined);
});

const o = (x: Partial<PricingOverride> & Pick<PricingOverride, 'model_pattern' | 'match_type'>): PricingOverride => x;

test('overrides: exact matches the whole name only', () => {
  const overrides = [o({ model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: 1 * M, output_cost_per_token: 2 * M })];
  assert.deepEqual(perMillion(priceOf('openai', 'gpt-4o', overrides)), [1, 2, 1.25, 2.5]);
  assert.deepEqual(priceOf('openai', 'gpt-4o-mini', overrides), priceOf('openai', 'gpt-4o-mini'));
  assert.deepEqual(priceOf('openai', 'GPT-4o', overrides), priceOf('openai', 'gpt-4o'));
});

test('overrides: wildcard * matches any run of characters, everything else literally', () => {
  const overrides = [o({ model_pattern: 'gpt-4.1*', match_type: 'wildcard', input_cost_per_token: 7 * M })];
  assert.equal(perMillion(priceOf('openai', 'gpt-4.1', overrides))![0], 7);
  assert.equal(perMillion(priceOf('openai', 'gpt-4.1-mini-2025-04-14', overrides))![0], 7);
  // '.' is literal, and the pattern covers the whole name.
  assert.equal(perMillion(priceOf('openai', 'gpt-401', overrides)), undefined);
  assert.equal(perMillion(priceOf('openai', 'x-gpt-4.1', overrides)), undefined);
  const mid = [o({ model_pattern: 'claude-*-4-5', match_type: 'wildcard', output_cost_per_token: 1 * M })];
  assert.equal(perMillion(priceOf('anthropic', 'claude-haiku-4-5', mid))![1], 1);
  assert.equal(perMillion(priceOf('anthropic', 'claude-haiku-4-5-20251001', mid))![1], 5);
});

test('overrides: regex is a JavaScript RegExp tested against the name', () => {
  const overrides = [o({ model_pattern: '^claude-(sonnet|opus)-4', match_type: 'regex', cache_read_input_token_cost: 0.01 * M, cache_creation_input_token_cost: 0.02 * M })];
  assert.deepEqual(perMillion(priceOf('anthropic', 'claude-sonnet-4-5', overrides)), [3, 15, 0.01, 0.02]);
  assert.deepEqual(perMillion(priceOf('anthropic', 'claude-opus-4-1', overrides)), [15, 75, 0.01, 0.02]);
  assert.deepEqual(priceOf('anthropic', 'claude-haiku-4-5', overrides), priceOf('anthropic', 'claude-haiku-4-5'));
  const broken = o({ model_pattern: '([', match_type: 'regex', input_cost_per_token: 1 });
  assert.match(overrideProblem(broken) ?? '', /not a valid regular expression/);
  assert.equal(overrideMatches(broken, '(['), false);
  assert.equal(overrideProblem(overrides[0]), undefined);
});

test('overrides: the first match wins, and request_types restricts where one applies', () => {
  const overrides = [
    o({ model_pattern: 'gpt-4o', match_type: 'exact', request_types: ['embedding'], input_cost_per_token: 9 * M }),
    o({ model_pattern: 'gpt-*', match_type: 'wildcard', request_types: ['chat_completion', 'chat_completion_stream'], input_cost_per_token: 3 * M }),
    o({ model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: 4 * M }),
  ];
  assert.equal(perMillion(priceOf('openai', 'gpt-4o', overrides, 'embedding'))![0], 9);
  assert.equal(perMillion(priceOf('openai', 'gpt-4o', overrides, 'chat_completion_stream'))![0], 3);
  assert.equal(perMillion(priceOf('openai', 'gpt-4o', overrides, 'responses'))![0], 4);
  // No request type given: only unrestricted overrides apply.
  assert.equal(perMillion(priceOf('openai', 'gpt-4o', overrides))![0], 4);
});

test('an override prices a model the table does not know; unset cache prices follow input', () => {
  const overrides = [o({ model_pattern: 'my-finetune-*', match_type: 'wildcard', input_cost_per_token: 2 * M, output_cost_per_token: 6 * M })];
  assert.deepEqual(perMillion(priceOf('openai', 'my-finetune-v3', overrides)), [2, 6, 2, 2]);
  assert.equal(priceOf('openai', 'other-model', overrides), undefined);
  assert.deepEqual(perMillion(priceOf('ollama', 'llama3', [o({ model_pattern: 'llama3', match_type: 'exact' })])), [0, 0, 0, 0]);
});

test('costOf: cached tokens are part of the prompt and priced at their own rate', () => {
  const sonnet = priceOf('anthropic', 'claude-sonnet-4-5')!;
  // 1M prompt tokens of which 200k read from cache and 100k written; 10k output.
  const cost = costOf(sonnet, { prompt_tokens: 1_000_000, completion_tokens: 10_000, cached_read_tokens: 200_000, cached_write_tokens: 100_000 });
  const expected = 0.7 * 3 + 0.2 * 0.3 + 0.1 * 3.75 + 0.01 * 15;
  assert.ok(Math.abs(cost - expected) < 1e-9, `${cost} vs ${expected}`);
  const gpt = priceOf('openai', 'gpt-4o')!;
  assert.ok(Math.abs(costOf(gpt, { prompt_tokens: 1000, completion_tokens: 500 }) - (1000 * 2.5 + 500 * 10) / 1e6) < 1e-12);
  // Nonsense counts never make a negative or NaN cost.
  const capped = costOf(gpt, { prompt_tokens: 10, completion_tokens: Number.NaN, cached_read_tokens: 50 });
  assert.ok(Math.abs(capped - 10 * 1.25e-6) < 1e-15, String(capped));
  assert.equal(costOf(gpt, { prompt_tokens: -5, completion_tokens: 0 }), 0);
});

test('OCR is priced per page: Mistral list prices, dated ids by prefix, and ocr_cost_per_page overrides', async () => {
  const { pagePriceOf } = await import('../../proxy/src/governance/pricing/pricing.ts');
  assert.equal(pagePriceOf('mistral', 'mistral-ocr-latest'), 0.002);
  assert.equal(pagePriceOf('mistral', 'mistral-ocr-2505'), 0.001);
  assert.equal(pagePriceOf('mistral', 'mistral-ocr-2505-completion'), 0.001);
  assert.equal(pagePriceOf('mistral', 'mistral-large-latest'), undefined, 'a chat model has no page price');
  // A host of Mistral's model without a table of its own gets Mistral's price; self-hosted ones none.
  assert.equal(pagePriceOf('vertex', 'mistral-ocr-2505'), 0.001);
  assert.equal(pagePriceOf('vllm', 'mistral-ocr-2505'), undefined);
  const overrides: PricingOverride[] = [
    { model_pattern: 'mistral-ocr-*', match_type: 'wildcard', input_cost_per_token: 1 },
    { model_pattern: 'mistral-ocr-*', match_type: 'wildcard', request_types: ['ocr'], ocr_cost_per_page: 0.004 },
  ];
  // The first override that sets a page price wins; one that sets only token prices does not count.
  assert.equal(pagePriceOf('mistral', 'mistral-ocr-latest', overrides, 'ocr'), 0.004);
  assert.equal(pagePriceOf('mistral', 'mistral-ocr-latest', overrides, 'chat_completion'), 0.002);
});

describe('container sessions', () => {
  test("a created container costs OpenAI's 5-minute minimum at its memory tier's per-minute rate", () => {
    // $0.03 / $0.12 / $0.48 / $1.92 per 20 minutes, so per minute a twentieth of that.
    const cents = (m: string) => Math.round((containerSessionCost('openai', m) ?? NaN) * 1e6) / 1e4;
    assert.deepEqual(['1g', '4g', '16g', '64g'].map(cents), [0.75, 3, 12, 48]);
  });

  test('an unknown tier, or a provider with no published container price, is unpriced', () => {
    assert.equal(containerSessionCost('openai', '2g'), undefined);
    assert.equal(containerSessionCost('openai', 'constructor'), undefined);
    assert.equal(containerSessionCost('openai', undefined), undefined);
    assert.equal(containerSessionCost('azure', '1g'), undefined);
  });
});

