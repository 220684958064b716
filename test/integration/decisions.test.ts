// POST /v1/decisions (OpenAI's Decisions shape) and POST /v1/systemone (the System One shape)
// through the gateway with the official openai SDK (client.decisions.create) against the mock:
// OpenAI and Fireworks answer in OpenAI's shape, Ollama in System One's, translated both ways;
// a System One client reaches an OpenAI-shape provider the same way. Governed like chat
// (virtual-key grants, a routing rule on request_type), priced per token, logged as `decision`,
// async, under every prefix; unsupported providers and bad input get their 400s.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { compat } from '../helpers/compat.ts';
import { errorOf } from '../helpers/openai-errors.ts';

const VK = 'sk-bf-decisions-vk-0123456789';
const CHAT_ONLY_VK = 'sk-bf-decisions-chat-only-0123';
const PER_INPUT = 1e-6;
const PER_OUTPUT = 6e-6;

let mock: MockProvider;
let gw: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  const pricing = { pricing_overrides: [{ model_pattern: 'gpt-6-luna', match_type: 'exact', request_types: ['decision'], input_cost_per_token: PER_INPUT, output_cost_per_token: PER_OUTPUT }] };
  gw = await startGateway({
    providers: {
      ...mockProviders(mock.url, { openai: pricing }),
      fireworks: mockProvider(mock.url, 'openai', {}, 'fireworks'),
      ollama: mockProvider(mock.url, 'ollama'),
    },
    logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
    client: { enable_logging: true, enforce_auth_on_inference: true, async_job_config: { lease_seconds: 2, poll_interval_ms: 100, sweep_interval_seconds: 1 } },
    governance: {
      virtual_keys: [
        {
          id: 'dec-vk',
          name: 'dec-vk',
          value: VK,
          provider_configs: [
            { provider: 'openai', allowed_models: ['gpt-6-luna'], key_ids: ['*'], weight: 1 },
            { provider: 'fireworks', allowed_models: ['accounts/acme/models/decider'], key_ids: ['*'], weight: 1 },
            { provider: 'ollama', allowed_models: ['nimble'], key_ids: ['*'], weight: 1 },
            { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 },
          ],
        },
        { id: 'chat-only', name: 'chat-only', value: CHAT_ONLY_VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] },
      ],
      routing_rules: [
        { name: 'house decider', cel_expression: 'request_type == "decision" && model == "house-decider"', targets: [{ provider: 'ollama', model: 'nimble', weight: 1 }], priority: 1 },
      ],
    },
  });
});

after(async () => {
  await gw?.stop();
  await mock?.close();
});

const client = (key = VK, prefix = '/v1') => new OpenAI({ baseURL: `${gw.url}${prefix}`, apiKey: key, maxRetries: 0 });

const TICKET = 'Customer wrote: I was charged twice for order 4411 and I want a refund today. This is urgent and I am angry.';
const QUESTIONS: OpenAI.DecisionCreateParams['questions'] = [
  { type: 'predicate', name: 'is_refund', instructions: 'Is the customer asking for a refund?' },
  { type: 'choice', name: 'urgency', instructions: 'How urgent is it?', choices: [{ value: 'low' }, { value: 'urgent', description: 'needs action today' }] },
  { type: 'score', instructions: 'How frustrated is the customer?', levels: [{ label: 'calm' }, { label: 'annoyed' }, { label: 'angry' }] },
  { type: 'predicate', instructions: 'REFUSE to say whether this is fine' },
];


async function post(path: string, body: unknown, key = VK): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': key }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const lastUpstream = () => mock.requests.at(-1)!;

/** The same answers, whichever provider shape they came through. */
function assertTicketAnswers(res: OpenAI.Decision): void {
  assert.equal(res.answers.length, 4);
  const [refund, urgency, frustration, refused] = res.answers;
  assert.deepEqual(refund, { type: 'predicate', name: 'is_refund', probability: 0.92 });
  assert.equal(urgency.type, 'choice');
  if (urgency.type === 'choice') {
    assert.equal(urgency.name, 'urgency');
    assert.equal(urgency.choice, 'urgent');
    assert.deepEqual(urgency.probabilities, [{ value: 'low', probability: 0.1 }, { value: 'urgent', probability: 0.9 }]);
    assert.equal(urgency.confidence, 0.9);
  }
  assert.equal(frustration.type, 'score');
  if (frustration.type === 'score') {
    assert.equal(frustration.name, null);
    assert.deepEqual(frustration.probabilities.map((p) => [p.label, p.value, p.probability]), [['calm', 0, 0.075], ['annoyed', 1, 0.075], ['angry', 2, 0.85]]);
    assert.equal(frustration.confidence, 0.85);
  }
  assert.deepEqual(refused, { type: 'refusal', name: null });
}

describe('POST /v1/decisions', () => {
  test(`OpenAI answers in its own shape through the SDK's decisions.create ${compat('/v1', 'decisions.create', 'openai')}`, async () => {
    const res = await client().decisions.create({ model: 'openai/gpt-6-luna', input: TICKET, questions: QUESTIONS });
    assertTicketAnswers(res);
    assert.equal(res.model, 'gpt-6-luna');
    assert.ok(res.usage.input_tokens > 20);
    const up = lastUpstream();
    assert.equal(up.path, '/openai/v1/decisions');
    assert.equal((up.body as { model: string }).model, 'gpt-6-luna');
    assert.deepEqual((up.body as { questions: unknown }).questions, QUESTIONS);
  });

  test('a System One provider (Ollama) gets a state and a map of questions; its answers come back in order, in OpenAI shape', async () => {
    const res = await client().decisions.create({ model: 'ollama/nimble', input: TICKET, questions: QUESTIONS });
    assertTicketAnswers(res);
    assert.equal(res.usage.output_tokens, 1);
    const up = lastUpstream();
    assert.equal(up.path, '/ollama/v1/systemone');
    assert.deepEqual(up.body, {
      model: 'nimble',
      state: TICKET,
      questions: {
        is_refund: { type: 'noul', instructions: 'Is the customer asking for a refund?' },
        urgency: { type: 'choice', instructions: 'How urgent is it?', criteria: { low: null, urgent: 'needs action today' } },
        question_3: { type: 'score', instructions: 'How frustrated is the customer?', criteria: ['calm', 'annoyed', 'angry'] },
        question_4: { type: 'noul', instructions: 'REFUSE to say whether this is fine' },
      },
    });
  });

  test('a conversation with a function call and its output is the state of a System One request', async () => {
    const res = await client().decisions.create({
      model: 'ollama/nimble',
      input: [
        { role: 'user', content: 'Delete the staging database please' },
        { type: 'function_call', call_id: 'c1', name: 'drop_database', arguments: '{"name":"production"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'dropped production' },
      ],
      questions: [{ type: 'predicate', name: 'wrong_target', instructions: 'Did the tool act on production instead of staging?' }],
    });
    assert.equal(res.answers[0].type, 'predicate');
    assert.deepEqual((lastUpstream().body as { state: unknown }).state, {
      messages: [
        { role: 'user', content: 'Delete the staging database please' },
        { type: 'function_call', call_id: 'c1', name: 'drop_database', arguments: '{"name":"production"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'dropped production' },
      ],
    });
  });

  test("Fireworks speaks OpenAI's shape: the request goes as it came", async () => {
    const res = await client().decisions.create({ model: 'fireworks/accounts/acme/models/decider', input: TICKET, questions: QUESTIONS.slice(0, 2) });
    assert.equal(res.answers.length, 2);
    const up = lastUpstream();
    assert.equal(up.path, '/openai/v1/decisions');
    assert.equal((up.body as { model: string }).model, 'accounts/acme/models/decider');
    assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'fireworks');
  });

  test('what System One cannot carry is a 400 naming the field: an image, a string and a boolean choice of the same text', async () => {
    const image = await errorOf(client().decisions.create({
      model: 'ollama/nimble',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }] }],
      questions: [{ type: 'predicate', instructions: 'Is it a cat?' }],
    }));
    assert.equal(image.status, 400);
    assert.equal((image.error as { param?: string }).param, 'input[0].content[1]');
    const typed = await errorOf(client().decisions.create({ model: 'ollama/nimble', input: 'x', questions: [{ type: 'choice', instructions: 'Which?', choices: [{ value: 'true' }, { value: true }] }] }));
    assert.equal(typed.status, 400);
    assert.equal((typed.error as { param?: string }).param, 'questions[0].choices[1].value');
    // OpenAI tells them apart: the same request is answered there.
    const ok = await client().decisions.create({ model: 'openai/gpt-6-luna', input: 'x', questions: [{ type: 'choice', instructions: 'Which?', choices: [{ value: 'true' }, { value: true }] }] });
    assert.equal(ok.answers[0].type, 'choice');
  });

  test('bad input is a 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ model: 'openai/gpt-6-luna', input: TICKET }, 'questions'],
      [{ model: 'openai/gpt-6-luna', questions: QUESTIONS }, 'input'],
      [{ model: 'openai/gpt-6-luna', input: TICKET, questions: [{ type: 'choice', instructions: 'one?', choices: [{ value: 'a' }] }] }, 'questions[0].choices'],
      [{ model: 'openai/gpt-6-luna', input: TICKET, questions: [{ type: 'score', instructions: 'how?', levels: [{ label: 'a' }, { label: 'b' }], choices: [] }] }, 'questions[0].choices'],
      [{ model: 'openai/gpt-6-luna', input: TICKET, questions: [{ type: 'predicate', name: 'x', instructions: 'a?' }, { type: 'predicate', name: 'x', instructions: 'b?' }] }, 'questions[1].name'],
    ];
    for (const [body, param] of cases) {
      const r = await post('/v1/decisions', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal((r.body.error as { param: string }).param, param, JSON.stringify(r.body));
    }
  });

  test('a provider without decisions gives the unsupported-operation 400', async () => {
    const before = mock.requests.length;
    const err = await errorOf(client().decisions.create({ model: 'anthropic/claude-sonnet-4-5', input: TICKET, questions: QUESTIONS }));
    assert.equal(err.status, 400);
    assert.equal((err.error as { type?: string }).type, 'unsupported_operation');
    assert.match(err.message, /operation 'decisions' is not supported by provider 'anthropic'/);
    assert.equal(mock.requests.length, before);
  });

  test('governed: no virtual key is a 401, a model outside its grants a 403, and a routing rule on request_type picks the target', async () => {
    assert.equal((await post('/v1/decisions', { model: 'openai/gpt-6-luna', input: TICKET, questions: QUESTIONS }, '')).status, 401);
    assert.equal((await errorOf(client(CHAT_ONLY_VK).decisions.create({ model: 'openai/gpt-6-luna', input: TICKET, questions: QUESTIONS }))).status, 403);
    const routed = await client().decisions.create({ model: 'house-decider', input: TICKET, questions: QUESTIONS });
    assertTicketAnswers(routed);
    assert.equal(lastUpstream().path, '/ollama/v1/systemone');
  });

  for (const prefix of ['/openai/v1', '/openai', '/litellm/v1', '/langchain/v1', '/pydanticai/v1'] as const) {
    test(`served under ${prefix} ${compat(prefix, 'decisions.create', 'openai')}`, async () => {
      const res = await client(VK, prefix).decisions.create({ model: 'openai/gpt-6-luna', input: TICKET, questions: QUESTIONS.slice(0, 1) });
      assert.deepEqual(res.answers[0], { type: 'predicate', name: 'is_refund', probability: 0.92 });
    });
  }

  test('logged as decision with its tokens, priced per token', async () => {
    const res = await client().decisions.create({ model: 'openai/gpt-6-luna', input: 'price this one request', questions: [{ type: 'predicate', name: 'priced', instructions: 'Is this priced?' }] });
    const want = res.usage.input_tokens * PER_INPUT + res.usage.output_tokens * PER_OUTPUT;
    await eventually(async () => {
      const logs = ((await (await fetch(`${gw.url}/api/logs?limit=200`)).json()) as { logs: { object: string; model: string; token_usage?: { prompt_tokens: number; completion_tokens: number }; cost?: number; virtual_key_id?: string }[] }).logs;
      const hit = logs.find((e) => e.object === 'decision' && e.token_usage?.prompt_tokens === res.usage.input_tokens && e.token_usage.completion_tokens === res.usage.output_tokens);
      assert.ok(hit, 'no decision record with these tokens yet');
      assert.equal(hit.model, 'gpt-6-luna');
      assert.equal(hit.virtual_key_id, 'dec-vk');
      assert.ok(Math.abs((hit.cost ?? 0) - want) < 1e-12, `cost ${hit.cost} != ${want}`);
    }, 5000);
  });

  test('/v1/async/decisions: 202 at submit, the answers when polled', async () => {
    const submitted = await post('/v1/async/decisions', { model: 'openai/gpt-6-luna', input: TICKET, questions: QUESTIONS });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    let job: { status: string; result?: OpenAI.Decision } | undefined;
    await eventually(async () => {
      job = (await (await fetch(`${gw.url}/v1/async/decisions/${String(submitted.body.id)}`, { headers: { 'x-bf-vk': VK } })).json()) as typeof job;
      assert.equal(job!.status, 'completed', JSON.stringify(job));
    }, 10_000);
    assertTicketAnswers(job!.result!);
  });

  test('counted in the request metrics under operation "decisions"', async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(text, /skybridge_requests_total\{operation="decisions",provider="openai",model="gpt-6-luna",status="200"\} [1-9]/);
  });
});

describe('POST /v1/systemone', () => {
  const SYSTEM_ONE = {
    state: { ticket: TICKET, order: 4411 },
    questions: {
      is_refund: { type: 'noul', instructions: 'Is the customer asking for a refund?' },
      urgency: { type: 'choice', instructions: 'How urgent is it?', criteria: { low: 'can wait', urgent: null } },
      frustration: { type: 'score', instructions: 'How frustrated is the customer?', criteria: ['calm', 'annoyed', 'angry'] },
      refused: { type: 'noul', instructions: 'REFUSE this one' },
    },
  };

  function assertSystemOneAnswers(body: Record<string, unknown>): void {
    const answers = body.answers as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(answers), ['is_refund', 'urgency', 'frustration'], 'an unanswered question is left out');
    assert.deepEqual(answers.is_refund, { type: 'noul', noul: 0.92 });
    assert.deepEqual(answers.urgency, { type: 'choice', choice: 'urgent', probabilities: { low: 0.1, urgent: 0.9 }, confidence: 0.9 });
    assert.equal(answers.frustration.type, 'score');
    assert.deepEqual(answers.frustration.legend, { 0: 'calm', 1: 'annoyed', 2: 'angry' });
    assert.deepEqual(answers.frustration.probabilities, { 0: 0.075, 1: 0.075, 2: 0.85 });
    assert.equal(answers.frustration.confidence, 0.85);
    const usage = body.usage as { input_tokens: number; output_tokens: number };
    assert.ok(usage.input_tokens > 0);
  }

  test("a System One client reaches an OpenAI-shape provider: the questions become OpenAI's list, the answers a map again", async () => {
    const r = await post('/v1/systemone', { model: 'openai/gpt-6-luna', ...SYSTEM_ONE });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assertSystemOneAnswers(r.body);
    assert.equal(r.body.model, 'gpt-6-luna');
    const up = lastUpstream();
    assert.equal(up.path, '/openai/v1/decisions');
    const sent = up.body as { input: unknown; questions: { type: string; name: string; choices?: unknown; levels?: unknown }[] };
    assert.deepEqual(sent.input, [{ role: 'user', content: [{ type: 'input_json', data: SYSTEM_ONE.state }] }]);
    assert.deepEqual(sent.questions.map((q) => [q.type, q.name]), [['predicate', 'is_refund'], ['choice', 'urgency'], ['score', 'frustration'], ['predicate', 'refused']]);
    assert.deepEqual(sent.questions[1].choices, [{ value: 'low', description: 'can wait' }, { value: 'urgent' }]);
    assert.deepEqual(sent.questions[2].levels, [{ label: 'calm' }, { label: 'annoyed' }, { label: 'angry' }]);
  });

  test('and a System One provider, with the same answers', async () => {
    const r = await post('/v1/systemone', { model: 'ollama/nimble', ...SYSTEM_ONE });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assertSystemOneAnswers(r.body);
    assert.equal(lastUpstream().path, '/ollama/v1/systemone');
  });

  test('a question map that is not System One is a 400 naming the field', async () => {
    const r = await post('/v1/systemone', { model: 'openai/gpt-6-luna', state: 'x', questions: { q: { type: 'score', instructions: 'how?', criteria: ['only one'] } } });
    assert.equal(r.status, 400);
    assert.match((r.body.error as { param: string }).param, /^questions/);
    const noState = await post('/v1/systemone', { model: 'openai/gpt-6-luna', questions: SYSTEM_ONE.questions });
    assert.equal(noState.status, 400);
    assert.equal((noState.body.error as { param: string }).param, 'state');
  });

  test('/v1/async/systemone runs as a job too', async () => {
    const submitted = await post('/v1/async/systemone', { model: 'ollama/nimble', ...SYSTEM_ONE });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    let job: { status: string; result?: Record<string, unknown> } | undefined;
    await eventually(async () => {
      job = (await (await fetch(`${gw.url}/v1/async/systemone/${String(submitted.body.id)}`, { headers: { 'x-bf-vk': VK } })).json()) as typeof job;
      assert.equal(job!.status, 'completed', JSON.stringify(job));
    }, 10_000);
    assertSystemOneAnswers(job!.result!);
  });
});
