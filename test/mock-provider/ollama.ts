// Ollama under /ollama: the System One API (POST /v1/systemone: a state and a map of named
// questions, noul / choice / score, answers keyed by name; decisions.ts has the rules) and, for
// every other path, Ollama's OpenAI-compatible API (the openai module). Ollama's own errors are
// `{"error": "<message>"}`; it needs no key.

import { json } from './reply.ts';
import { isObject } from './text.ts';
import { openai } from './openai.ts';
import { choose, expected, lower, rate, refuses, words, yesProbability } from './decisions.ts';
import type { FormatModule, Reply, RequestContext } from './types.ts';

const ollamaError = (status: number, message = 'internal error'): Reply => json(status, { error: message });

function systemOne(ctx: RequestContext): Reply {
  const body = ctx.body;
  if (ctx.badJson || !isObject(body)) return ollamaError(400, 'invalid request body');
  if (typeof body.model !== 'string' || body.model === '') return ollamaError(400, 'model is required');
  if (body.model.startsWith('nonexistent')) return ollamaError(404, `model '${body.model}' not found`);
  if (body.state === undefined || body.state === null || body.state === '') return ollamaError(400, 'state is required');
  if (!isObject(body.questions) || Object.keys(body.questions).length === 0) return ollamaError(400, 'questions is required');
  const state = lower(body.state);
  let tokens = words(typeof body.state === 'string' ? body.state : JSON.stringify(body.state));
  const answers: Record<string, unknown> = {};
  for (const [name, q] of Object.entries(body.questions)) {
    if (!isObject(q) || q.instructions === undefined) return ollamaError(400, `question '${name}': instructions is required`);
    tokens += words(lower(q.instructions));
    if (refuses(q.instructions)) continue;
    if (q.type === 'noul') answers[name] = { type: 'noul', noul: yesProbability(state, q.instructions) };
    else if (q.type === 'choice') {
      if (!isObject(q.criteria) || Object.keys(q.criteria).length < 2) return ollamaError(400, `question '${name}': choice criteria needs at least 2 options`);
      const labels = Object.keys(q.criteria);
      const d = choose(state, labels);
      answers[name] = { type: 'choice', choice: labels[d.pick], probabilities: Object.fromEntries(labels.map((l, i) => [l, d.probs[i]])), confidence: d.confidence };
    } else if (q.type === 'score') {
      if (!Array.isArray(q.criteria) || q.criteria.length < 2 || !q.criteria.every((c) => typeof c === 'string')) return ollamaError(400, `question '${name}': score criteria needs at least 2 levels`);
      const levels = q.criteria as string[];
      // A level may carry its description after a colon: the label is what the state is matched on.
      const d = rate(state, levels.map((l) => l.split(':')[0]));
      answers[name] = {
        type: 'score',
        score: expected(d.probs),
        legend: Object.fromEntries(levels.map((l, i) => [String(i), l])),
        probabilities: Object.fromEntries(levels.map((_, i) => [String(i), d.probs[i]])),
        confidence: d.confidence,
      };
    } else return ollamaError(400, `question '${name}': unknown type ${JSON.stringify(q.type)}`);
  }
  return json(200, { model: body.model, answers, usage: { input_tokens: tokens, output_tokens: 1 } });
}

export const ollama: FormatModule = {
  format: 'ollama',
  route(method, path, body) {
    if (method === 'POST' && path === '/v1/systemone') return { model: isObject(body) && typeof body.model === 'string' ? body.model : undefined, handle: systemOne };
    return openai.route(method, path, body);
  },
  // Ollama needs no key.
  authenticate: () => undefined,
  error: (status, message) => ollamaError(status, message),
  notFound: () => ollamaError(404, '404 page not found'),
};
