// The System One translation (unified/systemone.ts), both ways, without a server: OpenAI's
// Decisions request as a System One request and the answer back in question order, and a System
// One request as OpenAI's with its answer keyed by name again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromSystemOneAnswer, questionNames, systemOneToUnified, toSystemOne, toSystemOneAnswer } from '../../proxy/src/unified/systemone.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import type { DecisionRequest } from '../../proxy/src/unified/decisions.ts';

const REQ: DecisionRequest = {
  model: 'ollama/nimble',
  input: 'the state',
  questions: [
    { type: 'predicate', instructions: 'yes?' },
    { type: 'choice', name: 'question_1', instructions: 'which?', choices: [{ value: true }, { value: 'maybe', description: 'unsure' }] },
    { type: 'score', instructions: [{ type: 'input_text', text: 'how' }, { type: 'input_json', data: { scale: 3 } }], levels: [{ label: 'low' }, { label: 'high', description: 'a lot' }] },
  ],
};

test('unnamed questions get names that do not clash with the named ones', () => {
  assert.deepEqual(questionNames(REQ.questions), ['question_1_', 'question_1', 'question_3']);
});

test('OpenAI -> System One: noul, choice criteria by label, score levels with descriptions, JSON instructions as values', () => {
  assert.deepEqual(toSystemOne(REQ, 'nimble'), {
    model: 'nimble',
    state: 'the state',
    questions: {
      question_1_: { type: 'noul', instructions: 'yes?' },
      question_1: { type: 'choice', instructions: 'which?', criteria: { true: null, maybe: 'unsure' } },
      question_3: { type: 'score', instructions: ['how', { scale: 3 }], criteria: ['low', 'high: a lot'] },
    },
  });
});

test('System One answers -> OpenAI: in order, typed choice values restored, a missing answer is a refusal', () => {
  const res = fromSystemOneAnswer(
    {
      model: 'nimble',
      answers: {
        question_1: { type: 'choice', choice: 'true', probabilities: { true: 0.7, maybe: 0.3 }, confidence: 0.4 },
        question_3: { type: 'score', score: 0.8, legend: { 0: 'low', 1: 'high: a lot' }, probabilities: { 0: 0.2, 1: 0.8 }, confidence: 0.6 },
      },
      usage: { input_tokens: 12, output_tokens: 1 },
    },
    REQ,
  );
  assert.deepEqual(res.answers, [
    { type: 'refusal', name: null },
    { type: 'choice', name: 'question_1', choice: true, confidence: 0.4, probabilities: [{ value: true, probability: 0.7 }, { value: 'maybe', probability: 0.3 }] },
    { type: 'score', name: null, score: 0.8, confidence: 0.6, probabilities: [{ label: 'low', value: 0, probability: 0.2 }, { label: 'high', value: 1, probability: 0.8 }] },
  ]);
  assert.equal(res.usage.total_tokens, 13);
  assert.throws(() => fromSystemOneAnswer({ answers: { question_1: { type: 'choice', choice: 'nope', probabilities: {}, confidence: 1 } } }, REQ), /not one of the choices asked/);
});

test('an image cannot go to a System One provider: a 400 naming the part', () => {
  const req: DecisionRequest = { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }], questions: [{ type: 'predicate', instructions: 'cat?' }] };
  assert.throws(() => toSystemOne(req, 'm'), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'input[0].content[0]');
});

test('System One -> OpenAI and back: names kept, JSON state as input_json, noul criteria in the instructions', () => {
  const unified = systemOneToUnified({
    model: 'openai/gpt-6-luna',
    state: { a: 1 },
    questions: { ok: { type: 'noul', instructions: 'fine?', criteria: { true: 'all good' } }, pick: { type: 'choice', instructions: 'which', criteria: { x: null, y: 'why' } } },
  });
  assert.deepEqual(unified.input, [{ role: 'user', content: [{ type: 'input_json', data: { a: 1 } }] }]);
  assert.deepEqual(unified.questions, [
    { type: 'predicate', name: 'ok', instructions: 'fine?\nTrue means: all good' },
    { type: 'choice', name: 'pick', instructions: 'which', choices: [{ value: 'x' }, { value: 'y', description: 'why' }] },
  ]);
  const back = toSystemOneAnswer(
    {
      model: 'gpt-6-luna',
      answers: [{ type: 'refusal', name: 'ok' }, { type: 'choice', name: 'pick', choice: 'y', confidence: 0.5, probabilities: [{ value: 'x', probability: 0.25 }, { value: 'y', probability: 0.75 }] }],
      usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 7 },
    },
    unified,
  );
  assert.deepEqual(back, { model: 'gpt-6-luna', answers: { pick: { type: 'choice', choice: 'y', probabilities: { x: 0.25, y: 0.75 }, confidence: 0.5 } }, usage: { input_tokens: 5, output_tokens: 2 } });
});
