// OpenAI wire format: the Decisions API (POST /v1/decisions): an input and 1-400 questions
// (predicate, choice, score), answered in order (decisions.ts has the rules), or refused.

import { json } from './reply.ts';
import { isObject } from './text.ts';
import { bad, invalidType, missing, PARSE_ERROR } from './openai.ts';
import { choose, expected, lower, rate, refuses, words, yesProbability } from './decisions.ts';
import type { Reply, RequestContext } from './types.ts';

const PARAMS = new Set(['model', 'input', 'questions', 'prompt_cache_key', 'prompt_cache_options', 'safety_identifier']);

export function decisions(ctx: RequestContext): Reply {
  if (ctx.badJson) return bad(PARSE_ERROR);
  const body = ctx.body;
  if (!isObject(body)) return bad('Invalid type for request body: expected an object.');
  for (const k of Object.keys(body)) if (!PARAMS.has(k)) return bad(`Unrecognized request argument supplied: ${k}`, k, 'unknown_parameter');
  if (typeof body.model !== 'string') return missing('model');
  if (body.input === undefined) return missing('input');
  if (typeof body.input !== 'string' && !Array.isArray(body.input)) return invalidType('input', 'a string or array', body.input);
  const questions = body.questions;
  if (!Array.isArray(questions) || questions.length < 1 || questions.length > 400) return bad("Invalid 'questions': expected an array of 1 to 400 questions.", 'questions', 'invalid_value');
  const state = lower(body.input);
  let tokens = words(typeof body.input === 'string' ? body.input : JSON.stringify(body.input));
  const answers: unknown[] = [];
  for (let i = 0; i < questions.length; i++) {
    const q: unknown = questions[i];
    if (!isObject(q)) return invalidType(`questions[${i}]`, 'an object', q);
    const name = typeof q.name === 'string' ? q.name : null;
    if (q.instructions === undefined) return missing(`questions[${i}].instructions`);
    tokens += words(lower(q.instructions));
    if (refuses(q.instructions)) {
      answers.push({ type: 'refusal', name });
      continue;
    }
    if (q.type === 'predicate') answers.push({ type: 'predicate', name, probability: yesProbability(state, q.instructions) });
    else if (q.type === 'choice') {
      if (!Array.isArray(q.choices) || q.choices.length < 2 || q.choices.length > 255) return bad(`Invalid 'questions[${i}].choices': expected 2 to 255 choices.`, `questions[${i}].choices`, 'invalid_value');
      const values = q.choices.map((c) => (isObject(c) ? c.value : undefined));
      if (values.some((v) => typeof v !== 'string' && typeof v !== 'boolean')) return invalidType(`questions[${i}].choices[].value`, 'a string or boolean', values);
      const d = choose(state, values.map(String));
      answers.push({ type: 'choice', name, choice: values[d.pick], confidence: d.confidence, probabilities: values.map((value, j) => ({ value, probability: d.probs[j] })) });
    } else if (q.type === 'score') {
      if (!Array.isArray(q.levels) || q.levels.length < 2) return bad(`Invalid 'questions[${i}].levels': expected at least 2 levels.`, `questions[${i}].levels`, 'invalid_value');
      const labels = q.levels.map((l) => (isObject(l) && typeof l.label === 'string' ? l.label : ''));
      const d = rate(state, labels);
      answers.push({ type: 'score', name, score: expected(d.probs), confidence: d.confidence, probabilities: labels.map((label, j) => ({ label, value: j, probability: d.probs[j] })) });
    } else return bad(`Invalid value for 'questions[${i}].type': expected 'predicate', 'choice' or 'score'.`, `questions[${i}].type`, 'invalid_value');
  }
  const output = questions.length;
  return json(200, {
    answers,
    model: body.model,
    usage: { input_tokens: tokens, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: tokens + output },
  });
}
