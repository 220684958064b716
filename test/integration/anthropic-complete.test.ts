// Anthropic's legacy Text Completions (/anthropic/v1/complete) in front of every upstream format.
// The installed @anthropic-ai/sdk no longer has `completions`, so these calls are what it used to
// send: a POST with x-api-key and anthropic-version, JSON or `completion` SSE events back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FORMATS, MODELS } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

function complete(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${stack.gateway.url}/anthropic/v1/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'not-needed', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
}

interface Completion {
  type: string;
  id: string;
  completion: string;
  stop_reason: string | null;
  model: string;
}

/** SSE `event:`/`data:` pairs. */
async function events(res: Response): Promise<{ event: string; data: Completion }[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Completion;
      return { event, data };
    });
}

for (const format of FORMATS) {
  describe(`legacy complete to a ${format}-format upstream`, () => {
    test(`JSON answer in the legacy shape ${compat('/anthropic', 'complete', format)}`, async () => {
      const res = await complete({ model: MODELS[format], prompt: '\n\nHuman: Hello legacy world\n\nAssistant:', max_tokens_to_sample: 100 });
      assert.equal(res.status, 200);
      const body = (await res.json()) as Completion;
      assert.equal(body.type, 'completion');
      assert.match(body.id, /^compl_/);
      // The legacy API's completions follow "Assistant:" and start with a space.
      assert.equal(body.completion, ' Mock reply to: Hello legacy world');
      assert.equal(body.stop_reason, 'stop_sequence');
      assert.equal(body.model, MODELS[format]);
      assert.equal(stack.mock.requests.at(-1)!.format, format);
    });

    test(`streamed as completion events, the last with the stop reason ${compat('/anthropic', 'complete.stream', format)}`, async () => {
      const res = await complete({ model: MODELS[format], prompt: '\n\nHuman: stream the legacy way\n\nAssistant:', max_tokens_to_sample: 100, stream: true });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
      const evs = await events(res);
      assert.ok(evs.length >= 3, `${evs.length} events`);
      assert.ok(evs.every((e) => e.event === 'completion' && e.data.type === 'completion'));
      assert.equal(evs.map((e) => e.data.completion).join(''), ' Mock reply to: stream the legacy way');
      assert.ok(evs.slice(0, -1).every((e) => e.data.stop_reason === null));
      assert.equal(evs.at(-1)!.data.stop_reason, 'stop_sequence');
    });
  });
}

describe('legacy complete: prompt and limits', () => {
  test('the system prompt, earlier turns and stop sequences reach the upstream as messages', async () => {
    const res = await complete({
      model: MODELS.openai,
      prompt: 'You are terse.\n\nHuman: first question\n\nAssistant: first answer\n\nHuman: second question\n\nAssistant:',
      max_tokens_to_sample: 50,
      stop_sequences: ['\n\nHuman:'],
      temperature: 0.5,
    });
    assert.equal(res.status, 200);
    const body = stack.mock.requests.at(-1)!.body as { messages: unknown; max_tokens: number; stop: string[]; temperature: number };
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
    ]);
    assert.equal(body.max_tokens, 50);
    assert.deepEqual(body.stop, ['\n\nHuman:']);
    assert.equal(body.temperature, 0.5);
  });

  test('max_tokens_to_sample cuts the answer: stop_reason max_tokens', async () => {
    const res = await complete({ model: MODELS.anthropic, prompt: '\n\nHuman: a long question here\n\nAssistant:', max_tokens_to_sample: 2 });
    const body = (await res.json()) as Completion;
    assert.equal(body.completion, ' Mock reply');
    assert.equal(body.stop_reason, 'max_tokens');
  });

  for (const [prompt, why] of [
    ['Hello, world', 'no turns'],
    ['\n\nAssistant: hi\n\nHuman: hello\n\nAssistant:', 'first turn not Human'],
    ['\n\nHuman: Hello, Claude', 'no final Assistant turn'],
  ] as const) {
    test(`an invalid prompt (${why}) is an Anthropic-shaped 400 and nothing goes upstream`, async () => {
      const before = stack.mock.requests.length;
      const res = await complete({ model: MODELS.anthropic, prompt, max_tokens_to_sample: 10 });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /prompt must/);
      assert.equal(stack.mock.requests.length, before);
    });
  }

  test('an upstream 429 keeps its status and the Anthropic error shape', async () => {
    stack.mock.inject({ format: 'gemini', status: 429 });
    const res = await complete({ model: MODELS.gemini, prompt: '\n\nHuman: x\n\nAssistant:', max_tokens_to_sample: 10 });
    assert.equal(res.status, 429);
    const body = (await res.json()) as { error: { type: string } };
    assert.equal(body.error.type, 'rate_limit_error');
  });
});
