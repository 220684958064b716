// Decisions on OpenRouter: its alpha endpoint POST /api/alpha/decisions (beside /api/v1) speaks a
// variant of System One. Through the gateway with the official openai SDK (client.decisions.create)
// and a System One client, against the mock's OpenRouter: the request as OpenRouter's schema
// wants it, answers back in order, OpenRouter's usage.cost logged and charged to a budget as the
// price (the table price is 0 here), answers without confidence and probabilities passed on
// without invented numbers, OpenRouter's own request members passed on, the async route, and an
// upstream error relayed without the provider key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { OPENROUTER_INPUT_COST, OPENROUTER_OUTPUT_COST } from '../mock-provider/openrouter.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProvider } from '../helpers/providers.ts';
import { compat } from '../helpers/compat.ts';
import { errorOf } from '../helpers/openai-errors.ts';

const VK = 'sk-bf-ordec-vk-0123456789';
const BUDGET_VK = 'sk-bf-ordec-budget-0123456789';
const OR_KEY = 'sk-or-v1-secretsecretsecret0123456789';
const MODEL = 'typesafe/jev-1.13';

let mock: MockProvider;
let gw: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  const grants = [{ provider: 'openrouter', allowed_models: [MODEL, 'typesafe/jev-sparse'], key_ids: ['*'], weight: 1 }];
  gw = await startGateway({
    providers: {
      openrouter: mockProvider(mock.url, 'openrouter', {
        keys: [{ name: 'or-key', value: OR_KEY, weight: 1 }],
        network_config: { base_url: `${mock.url}/openrouter/api`, max_retries: 0 },
        // A table price of 0: what is charged can only come from OpenRouter's usage.cost.
        pricing_overrides: [{ model_pattern: 'typesafe/*', match_type: 'wildcard', request_types: ['decision'], input_cost_per_token: 0, output_cost_per_token: 0 }],
      }),
    },
    logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
    client: { enable_logging: true, enforce_auth_on_inference: true, async_job_config: { lease_seconds: 2, poll_interval_ms: 100, sweep_interval_seconds: 1 } },
    governance: {
      budgets: [{ id: 'ordec-budget', max_limit: 0.0001, reset_duration: '1d' }],
      virtual_keys: [
        { id: 'ordec-vk', name: 'ordec-vk', value: VK, provider_configs: grants },
        { id: 'ordec-budget-vk', name: 'ordec-budget-vk', value: BUDGET_VK, budget_id: 'ordec-budget', provider_configs: grants },
      ],
    },
  });
});

after(async () => {
  await gw?.stop();
  await mock?.close();
});

const client = (key = VK) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

const TICKET = 'Customer wrote: I was charged twice for order 4411 and I want a refund today. This is urgent and I am angry.';
const QUESTIONS: OpenAI.DecisionCreateParams['questions'] = [
  { type: 'predicate', name: 'is_refund', instructions: 'Is the customer asking for a refund?' },
  { type: 'choice', name: 'urgency', instructions: 'How urgent is it?', choices: [{ value: 'low' }, { value: 'urgent', description: 'needs action today' }] },
  { type: 'score', instructions: 'How frustrated is the customer?', levels: [{ label: 'calm' }, { label: 'annoyed' }, { label: 'angry' }] },
  { type: 'predicate', instructions: 'REFUSE to say whether this is fine' },
];

const lastUpstream = () => mock.requests.at(-1)!;
const reported = () => (JSON.parse(lastUpstream().responseBody!) as { usage: { input_tokens: number; output_tokens: number; cost: number } }).usage;

async function post(path: string, body: unknown, key = VK): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': key }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('decisions on OpenRouter', () => {
  test(`OpenAI's shape in, OpenRouter's alpha endpoint and schema out, the answers back in order ${compat('/v1', 'decisions.create', 'openai')}`, async () => {
    const res = await client().decisions.create({ model: `openrouter/${MODEL}`, input: TICKET, questions: QUESTIONS });
    const up = lastUpstream();
    assert.equal(up.path, '/openrouter/api/alpha/decisions');
    assert.equal(up.headers.authorization, `Bearer ${OR_KEY}`);
    assert.deepEqual(up.body, {
      model: MODEL,
      state: TICKET,
      questions: {
        is_refund: { type: 'noul', instructions: 'Is the customer asking for a refund?' },
        // OpenRouter wants a string for every choice: the label stands for a choice without a description.
        urgency: { type: 'choice', instructions: 'How urgent is it?', criteria: { low: 'low', urgent: 'needs action today' } },
        question_3: { type: 'score', instructions: 'How frustrated is the customer?', criteria: ['calm', 'annoyed', 'angry'] },
        question_4: { type: 'noul', instructions: 'REFUSE to say whether this is fine' },
      },
    });
    assert.equal(res.answers.length, 4);
    const [refund, urgency, frustration, refused] = res.answers;
    assert.deepEqual(refund, { type: 'predicate', name: 'is_refund', probability: 0.92 });
    assert.deepEqual(urgency, { type: 'choice', name: 'urgency', choice: 'urgent', confidence: 0.9, probabilities: [{ value: 'low', probability: 0.1 }, { value: 'urgent', probability: 0.9 }] });
    assert.equal(frustration.type, 'score');
    if (frustration.type === 'score') {
      assert.deepEqual(frustration.probabilities.map((p) => [p.label, p.value, p.probability]), [['calm', 0, 0.075], ['annoyed', 1, 0.075], ['angry', 2, 0.85]]);
      assert.equal(frustration.confidence, 0.85);
    }
    assert.deepEqual(refused, { type: 'refusal', name: null });
    assert.equal(res.model, MODEL);
    const usage = reported();
    assert.equal(res.usage.input_tokens, usage.input_tokens);
    assert.equal(res.usage.output_tokens, 3);
    assert.equal(res.usage.total_tokens, usage.input_tokens + 3);
    // OpenRouter's cost travels in usage, as OpenRouter reports it.
    assert.equal((res.usage as { cost?: number }).cost, usage.cost);
  });

  test("answers without confidence and probabilities pass on as null and an empty list, never made up", async () => {
    const res = await client().decisions.create({ model: 'openrouter/typesafe/jev-sparse', input: TICKET, questions: QUESTIONS.slice(0, 3) });
    assert.deepEqual(res.answers[1], { type: 'choice', name: 'urgency', choice: 'urgent', confidence: null, probabilities: [] });
    assert.equal(res.answers[2].type, 'score');
    if (res.answers[2].type === 'score') {
      assert.equal(res.answers[2].confidence, null);
      assert.deepEqual(res.answers[2].probabilities, []);
      assert.ok(res.answers[2].score > 1.5);
    }
  });

  test('a System One client gets the map back, without the fields OpenRouter left out, the cost in usage', async () => {
    const r = await post('/v1/systemone', {
      model: 'openrouter/typesafe/jev-sparse',
      state: { ticket: 'refund today, urgent' },
      questions: {
        urgency: { type: 'choice', instructions: 'How urgent?', criteria: { low: null, urgent: 'today' } },
        level: { type: 'score', instructions: 'How bad?', criteria: ['mild', 'urgent'] },
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const up = lastUpstream().body as { questions: { urgency: { criteria: unknown } }; state: unknown };
    assert.deepEqual(up.questions.urgency.criteria, { low: 'low', urgent: 'today' });
    assert.deepEqual(r.body.answers, { urgency: { type: 'choice', choice: 'urgent' }, level: { type: 'score', score: 0.85, legend: { 0: 'mild', 1: 'urgent' } } });
    assert.deepEqual(r.body.usage, reported());
  });

  test("OpenRouter's own members (provider preferences, session_id) reach it; a wrong one is a 400 naming it", async () => {
    const ok = await post('/v1/decisions', { model: `openrouter/${MODEL}`, input: TICKET, questions: QUESTIONS.slice(0, 1), provider: { order: ['typesafe'], allow_fallbacks: false }, session_id: 'sess-42' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const sent = lastUpstream().body as { provider?: unknown; session_id?: unknown };
    assert.deepEqual(sent.provider, { order: ['typesafe'], allow_fallbacks: false });
    assert.equal(sent.session_id, 'sess-42');
    const bad = await post('/v1/decisions', { model: `openrouter/${MODEL}`, input: TICKET, questions: QUESTIONS.slice(0, 1), session_id: 42 });
    assert.equal(bad.status, 400);
    assert.equal((bad.body.error as { param?: string }).param, 'session_id');
  });

  test("logged as a decision whose cost is OpenRouter's usage.cost, not the table's price", async () => {
    const res = await client().decisions.create({ model: `openrouter/${MODEL}`, input: 'price this one OpenRouter request please', questions: [{ type: 'predicate', name: 'priced', instructions: 'Is this priced?' }] });
    const { cost } = reported();
    assert.ok(Math.abs(cost - (res.usage.input_tokens * OPENROUTER_INPUT_COST + res.usage.output_tokens * OPENROUTER_OUTPUT_COST)) < 1e-9);
    await eventually(async () => {
      const logs = ((await (await fetch(`${gw.url}/api/logs?limit=200`)).json()) as { logs: { object: string; provider: string; model: string; token_usage?: { prompt_tokens: number }; cost?: number }[] }).logs;
      const hit = logs.find((e) => e.object === 'decision' && e.provider === 'openrouter' && e.token_usage?.prompt_tokens === res.usage.input_tokens);
      assert.ok(hit, 'no OpenRouter decision record with these tokens yet');
      assert.equal(hit.model, MODEL);
      assert.ok(Math.abs((hit.cost ?? 0) - cost) < 1e-12, `cost ${hit.cost} != ${cost}`);
    }, 5000);
  });

  test("a budget is charged OpenRouter's cost and stops decisions once spent", async () => {
    // About 7e-5 USD a call against a 1e-4 budget: the third call finds it spent.
    const call = () => post('/v1/decisions', { model: `openrouter/${MODEL}`, input: TICKET, questions: QUESTIONS.slice(0, 1) }, BUDGET_VK);
    const first = await call();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.ok(reported().cost > 0.00005);
    assert.equal((await call()).status, 200);
    await eventually(async () => {
      const over = await call();
      assert.equal(over.status, 402, JSON.stringify(over.body));
      assert.equal((over.body.error as { code: string }).code, 'budget_exceeded');
    }, 5000);
  });

  test('/v1/async/decisions on OpenRouter: 202 at submit, the translated answers when polled', async () => {
    const submitted = await post('/v1/async/decisions', { model: `openrouter/${MODEL}`, input: TICKET, questions: QUESTIONS.slice(0, 2) });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    let job: { status: string; result?: OpenAI.Decision } | undefined;
    await eventually(async () => {
      job = (await (await fetch(`${gw.url}/v1/async/decisions/${String(submitted.body.id)}`, { headers: { 'x-bf-vk': VK } })).json()) as typeof job;
      assert.equal(job!.status, 'completed', JSON.stringify(job));
    }, 10_000);
    assert.deepEqual(job!.result!.answers[1], { type: 'choice', name: 'urgency', choice: 'urgent', confidence: 0.9, probabilities: [{ value: 'low', probability: 0.1 }, { value: 'urgent', probability: 0.9 }] });
    assert.equal(mock.requests.filter((r) => r.path === '/openrouter/api/alpha/decisions').at(-1)!.status, 200);
  });

  test("OpenRouter's error is relayed with its status and message, the provider key nowhere in it", async () => {
    mock.inject({ format: 'openrouter', status: 402, message: `Insufficient credits for key ${OR_KEY}. Add more at https://openrouter.ai/settings/credits` });
    const err = await errorOf(client().decisions.create({ model: `openrouter/${MODEL}`, input: TICKET, questions: QUESTIONS.slice(0, 1) }));
    assert.equal(lastUpstream().status, 402);
    assert.equal(err.status, 402);
    assert.match(err.message, /Insufficient credits/);
    const text = JSON.stringify(err.error) + err.message;
    assert.ok(!text.includes(OR_KEY), text);
    assert.ok(!text.includes('secretsecret'), text);
  });

  test("what OpenRouter's schema cannot carry is refused before anything goes out: an image in the input", async () => {
    const before = mock.requests.length;
    const err = await errorOf(client().decisions.create({ model: `openrouter/${MODEL}`, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/x.png' }] }], questions: QUESTIONS.slice(0, 1) }));
    assert.equal(err.status, 400);
    assert.equal((err.error as { param?: string }).param, 'input[0].content[0]');
    assert.equal(mock.requests.length, before);
  });
});
