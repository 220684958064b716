// OpenRouter's alpha decisions translation (unified/openrouter-decisions.ts), without a server:
// System One's request with text instructions and string choice criteria; its answers read with
// confidence and probabilities optional and usage.cost kept; and a System One client's answer
// leaving out what OpenRouter left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromOpenRouterDecisions, toOpenRouterDecisions } from '../../proxy/src/unified/openrouter-decisions.ts';
import { fromSystemOneAnswer, systemOneToUnified, toSystemOneAnswer } from '../../proxy/src/unified/systemone.ts';
import { decisionUsage, type DecisionRequest } from '../../proxy/src/unified/decisions.ts';
import { ShapeError } from '../../proxy/src/unified/answer-shape.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const REQ: DecisionRequest = {
  model: 'openrouter/typesafe/jev-1.13',
  input: [{ role: 'user', content: 'charged twice' }],
  questions: [
    { type: 'predicate', name: 'refund', instructions: 'Refund?' },
    { type: 'choice', name: 'urgency', instructions: [{ type: 'input_text', text: 'How urgent?' }, { type: 'input_json', data: { sla: '1d' } }], choices: [{ value: 'low' }, { value: 'high', description: 'today' }] },
    { type: 'score', name: 'anger', instructions: 'How angry?', levels: [{ label: 'calm' }, { label: 'angry', description: 'shouting' }] },
  ],
};

test('the request: instructions as one text (JSON as its text), a choice without a description described by its label', () => {
  assert.deepEqual(toOpenRouterDecisions(REQ, 'typesafe/jev-1.13'), {
    model: 'typesafe/jev-1.13',
    state: { messages: [{ role: 'user', content: 'charged twice' }] },
    questions: {
      refund: { type: 'noul', instructions: 'Refund?' },
      urgency: { type: 'choice', instructions: 'How urgent?\n{"sla":"1d"}', criteria: { low: 'low', high: 'today' } },
      anger: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'angry: shouting'] },
    },
  });
});

test("OpenRouter's own request members go as given; a wrong one is a 400 naming it", () => {
  const body = toOpenRouterDecisions({ ...REQ, provider: { order: ['typesafe'] }, session_id: 's-1', user: 'u-1', trace: { run: 'r' } } as DecisionRequest, 'm');
  assert.deepEqual([body.provider, body.session_id, body.user, body.trace], [{ order: ['typesafe'] }, 's-1', 'u-1', { run: 'r' }]);
  assert.throws(() => toOpenRouterDecisions({ ...REQ, session_id: 7 } as DecisionRequest, 'm'), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'session_id');
  assert.equal(Object.hasOwn(toOpenRouterDecisions(REQ, 'm'), 'provider'), false);
});

const FULL = {
  id: 'gen-1',
  provider: 'TypeSafe',
  model: 'typesafe/jev-1.13',
  answers: {
    refund: { type: 'noul', noul: 0.9 },
    urgency: { type: 'choice', choice: 'high', confidence: 0.8, probabilities: { low: 0.2, high: 0.8 } },
    anger: { type: 'score', score: 0.7, confidence: 0.7, probabilities: { 0: 0.3, 1: 0.7 }, legend: { 0: 'calm', 1: 'angry: shouting' } },
  },
  usage: { input_tokens: 40, output_tokens: 3, cost: 0.00011 },
};

test('a full answer in OpenAI shape, its cost kept in usage and read as the charged price', () => {
  const res = fromOpenRouterDecisions(FULL, REQ);
  assert.deepEqual(res.answers, [
    { type: 'predicate', name: 'refund', probability: 0.9 },
    { type: 'choice', name: 'urgency', choice: 'high', confidence: 0.8, probabilities: [{ value: 'low', probability: 0.2 }, { value: 'high', probability: 0.8 }] },
    { type: 'score', name: 'anger', score: 0.7, confidence: 0.7, probabilities: [{ label: 'calm', value: 0, probability: 0.3 }, { label: 'angry', value: 1, probability: 0.7 }] },
  ]);
  assert.equal(res.usage.cost, 0.00011);
  assert.equal(res.usage.total_tokens, 43);
  assert.deepEqual(decisionUsage(res.usage), { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43, cost: 0.00011 });
});

const SPARSE = {
  model: 'typesafe/jev-1.13',
  answers: { refund: { type: 'noul', noul: 0.1 }, urgency: { type: 'choice', choice: 'low' }, anger: { type: 'score', score: 0.25 } },
  usage: { input_tokens: 40, output_tokens: 3 },
};

test('confidence and probabilities left out are not invented: null and an empty list; no cost, none in usage', () => {
  const res = fromOpenRouterDecisions(SPARSE, REQ);
  assert.deepEqual(res.answers.slice(1), [
    { type: 'choice', name: 'urgency', choice: 'low', confidence: null, probabilities: [] },
    { type: 'score', name: 'anger', score: 0.25, confidence: null, probabilities: [] },
  ]);
  assert.equal(res.usage.cost, undefined);
  assert.equal(decisionUsage(res.usage)?.cost, undefined);
});

test('System One (Ollama) stays strict: a choice without confidence is a shape error', () => {
  assert.throws(() => fromSystemOneAnswer(SPARSE, REQ), ShapeError);
});

test('a wrong answer is still a shape error: a choice not asked, a score that is not a number, a negative cost ignored', () => {
  assert.throws(() => fromOpenRouterDecisions({ ...SPARSE, answers: { urgency: { type: 'choice', choice: 'medium' } } }, REQ), /not one of the choices asked/);
  assert.throws(() => fromOpenRouterDecisions({ ...SPARSE, answers: { anger: { type: 'score', score: 'high' } } }, REQ), /anger.score/);
  assert.equal(fromOpenRouterDecisions({ ...FULL, usage: { input_tokens: 1, output_tokens: 1, cost: -1 } }, REQ).usage.cost, undefined);
});

test('a System One client gets the sparse answer without the fields OpenRouter left out, the legend from its levels, and the cost', () => {
  const req = systemOneToUnified({
    model: 'openrouter/typesafe/jev-1.13',
    state: 'charged twice',
    questions: { urgency: { type: 'choice', instructions: 'How urgent?', criteria: { low: null, high: 'today' } }, anger: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'angry'] } },
  });
  const out = toSystemOneAnswer(fromOpenRouterDecisions({ model: 'm', answers: SPARSE.answers, usage: { input_tokens: 5, output_tokens: 2, cost: 0.5 } }, req), req);
  assert.deepEqual(out, {
    model: 'm',
    answers: { urgency: { type: 'choice', choice: 'low' }, anger: { type: 'score', score: 0.25, legend: { 0: 'calm', 1: 'angry' } } },
    usage: { input_tokens: 5, output_tokens: 2, cost: 0.5 },
  });
});
