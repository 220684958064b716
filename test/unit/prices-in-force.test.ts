// The prices the Models & pricing page lists (governance/pricing/in-force.ts) and the order the
// request path tries overrides in (config/governance-runtime.ts): records written through /api
// first, then the provider's own list; the page and the charge agree. Plus the playground's
// stream reader (dashboard/src/pages/playground/stream.ts) and the SSE splitter it reads with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pricesInForce, type PricingInput } from '../../proxy/src/governance/pricing/in-force.ts';
import { priceOf } from '../../proxy/src/governance/pricing/pricing.ts';
import { pricingOverridesOf } from '../../proxy/src/config/governance-runtime.ts';
import type { GatewayConfig } from '../../proxy/src/schema/gateway.ts';
import { takeEvents } from '../../dashboard/src/lib/sse.ts';
import { readEvent, type StreamState } from '../../dashboard/src/pages/playground/stream.ts';

const input = (over: Partial<PricingInput> = {}): PricingInput => ({
  providers: [{ name: 'openai', configured: ['house-model'], listed: ['gpt-4o', 'gpt-4o-2024-08-06'] }],
  records: [],
  providerOverrides: {},
  ...over,
});

const row = (rows: ReturnType<typeof pricesInForce>, provider: string, model: string) => {
  const r = rows.models.find((x) => x.provider === provider && x.model === model);
  assert.ok(r, `${provider}/${model}`);
  return r;
};

test('built-in, a dated id priced by its listed prefix, none for an unknown configured model, and providers not configured', () => {
  const p = pricesInForce(input());
  assert.deepEqual([row(p, 'openai', 'gpt-4o').source, row(p, 'openai', 'gpt-4o').input_per_million], ['builtin', 2.5]);
  const dated = row(p, 'openai', 'gpt-4o-2024-08-06');
  assert.deepEqual([dated.source, dated.output_per_million, dated.known_from], ['builtin', 10, ['listed']]);
  const house = row(p, 'openai', 'house-model');
  assert.equal(house.source, 'none');
  assert.equal(p.unpriced, 1);
  const claude = row(p, 'anthropic', 'claude-sonnet-4-5');
  assert.deepEqual([claude.configured, claude.source, claude.cache_write_per_million], [false, 'builtin', 3.75]);
});

test('a record wins over the provider\'s own override, a global record applies to every configured provider, not to others', () => {
  const p = pricesInForce(
    input({
      records: [
        { id: 'r1', provider: 'openai', model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: 1e-5 },
        { id: 'g', model_pattern: 'house-*', match_type: 'wildcard', input_cost_per_token: 1e-6, output_cost_per_token: 2e-6 },
        { id: 'g2', model_pattern: 'claude-sonnet-4-5', match_type: 'exact', input_cost_per_token: 9e-6 },
      ],
      providerOverrides: { openai: [{ model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: 5e-6 }] },
    }),
  );
  const gpt = row(p, 'openai', 'gpt-4o');
  // Only the input is overridden: output and cache keep the built-in price.
  assert.deepEqual([gpt.source, gpt.input_per_million, gpt.output_per_million, gpt.override?.id], ['override', 10, 10, 'r1']);
  const house = row(p, 'openai', 'house-model');
  assert.deepEqual([house.source, house.input_per_million, house.output_per_million, house.override?.id], ['override', 1, 2, 'g']);
  assert.equal(p.unpriced, 0);
  // anthropic is not configured: overrides are never applied there.
  assert.equal(row(p, 'anthropic', 'claude-sonnet-4-5').source, 'builtin');

  // The request path tries them in the same order.
  const config = {
    providers: { openai: { keys: [], pricing_overrides: [{ model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: 5e-6 }] } },
    governance: { pricing_overrides: [{ id: 'r1', provider: 'openai', model_pattern: 'gpt-4o', match_type: 'exact', input_cost_per_token: 1e-5 }] },
  } as unknown as GatewayConfig;
  const overrides = pricingOverridesOf(config).get('openai');
  assert.equal(overrides?.length, 2);
  assert.equal(priceOf('openai', 'gpt-4o', overrides)?.input, 1e-5);
  assert.ok(!('id' in overrides![0]!), 'the record id is not a price field');
});

test('an override limited to request types is shown with them; video and OCR models are priced per second and per page', () => {
  const p = pricesInForce(
    input({
      providers: [
        { name: 'openai', configured: [], listed: [] },
        { name: 'mistral', configured: [], listed: [] },
      ],
      records: [{ id: 'v', provider: 'openai', model_pattern: 'sora-2', match_type: 'exact', request_types: ['video_generation'], output_cost_per_token: 0.2 }],
    }),
  );
  const sora = row(p, 'openai', 'sora-2');
  assert.deepEqual([sora.source, sora.per_second?.['720p'], sora.override?.request_types, sora.input_per_million], ['override', 0.2, ['video_generation'], undefined]);
  assert.deepEqual(row(p, 'openai', 'sora-2-pro').per_second, { '720p': 0.3, '1080p': 0.5, '4k': 0.5 });
  assert.equal(row(p, 'mistral', 'mistral-ocr-2505').per_page, 0.001);
});

test('the playground reads chat chunks, Responses deltas, an in-band error and the summary from the SSE text', () => {
  const wire =
    'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n' +
    'data: {"choices":[{"delta":{"content":"lo"}}]}\r\n\r\n' +
    'event: response.output_text.delta\ndata: {"delta":"!"}\n\n' +
    'data: [DONE]\n\n' +
    'event: playground.summary\ndata: {"record":{"id":"x"},"targets":[],"logged":true}\n\n' +
    'data: {"choices":[{"delta":{"content":"incompl';
  const { events, rest } = takeEvents(wire);
  assert.equal(rest, 'data: {"choices":[{"delta":{"content":"incompl');
  let s: StreamState = { text: '', events: 0 };
  for (const e of events) s = readEvent(s, e);
  assert.equal(s.text, 'Hello!');
  assert.equal(s.summary?.record.id, 'x');
  assert.equal(s.error, undefined);
  const failed = readEvent(s, { event: 'message', data: '{"error":{"message":"upstream down"}}' });
  assert.equal(failed.error, 'upstream down');
});
