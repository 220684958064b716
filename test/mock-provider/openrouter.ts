// OpenRouter under /openrouter: the alpha decisions API (POST /openrouter/api/alpha/decisions,
// beside the versioned API) and, for /openrouter/api/v1/..., OpenAI's API (the openai module).
// The decisions wire format is the one OpenRouter's public client states (Effect's
// @effect/ai-openrouter OpenRouterSchema): System One's `state` and map of questions, where
// instructions are a text, a choice's criteria map each label to a string, a noul's criteria give
// both `true` and `false`; answers keyed by name, a choice's or score's `confidence` and
// `probabilities` optional; usage `{input_tokens, output_tokens, cost}`. Rules in decisions.ts;
// here, a model whose name contains `sparse` answers choices and scores without confidence and
// probabilities, and `cost` is 2e-6 USD per input token plus 1e-5 per output token.
// OpenRouter's errors are `{"error": {"code": <status>, "message": "..."}}`.

import { json } from './reply.ts';
import { isObject } from './text.ts';
import { openai } from './openai.ts';
import { choose, expected, lower, rate, refuses, words, yesProbability } from './decisions.ts';
import type { FormatModule, Reply, RequestContext } from './types.ts';

export const OPENROUTER_INPUT_COST = 2e-6;
export const OPENROUTER_OUTPUT_COST = 1e-5;

const DEFAULT_MESSAGES: Record<number, string> = { 400: 'Bad Request', 401: 'No auth credentials found', 402: 'Insufficient credits', 404: 'Not Found', 429: 'Rate limit exceeded', 500: 'Internal Server Error', 502: 'Provider returned error', 503: 'Service Unavailable' };

const openrouterError = (status: number, message?: string): Reply => json(status, { error: { code: status, message: message ?? DEFAULT_MESSAGES[status] ?? `Error ${status}` } });

const isText = (v: unknown): v is string => typeof v === 'string' && v !== '';

function decisions(ctx: RequestContext): Reply {
  const body = ctx.body;
  if (ctx.badJson || !isObject(body)) return openrouterError(400, 'Invalid JSON body');
  if (!isText(body.model)) return openrouterError(400, 'model: Required');
  if (body.model.startsWith('nonexistent')) return openrouterError(404, `No endpoints found for ${body.model}.`);
  if (body.state === undefined || body.state === null || typeof body.state === 'number' || typeof body.state === 'boolean') return openrouterError(400, 'state: Expected string, object or array');
  if (!isObject(body.questions) || Object.keys(body.questions).length === 0) return openrouterError(400, 'questions: Required');
  const sparse = body.model.includes('sparse');
  const state = lower(body.state);
  let tokens = words(typeof body.state === 'string' ? body.state : JSON.stringify(body.state));
  const answers: Record<string, unknown> = {};
  for (const [name, q] of Object.entries(body.questions)) {
    if (!isObject(q) || typeof q.instructions !== 'string') return openrouterError(400, `questions.${name}.instructions: Expected string`);
    tokens += words(q.instructions);
    if (q.type === 'noul') {
      if (q.criteria !== undefined && !(isObject(q.criteria) && typeof q.criteria.true === 'string' && typeof q.criteria.false === 'string')) return openrouterError(400, `questions.${name}.criteria: Expected {true: string, false: string}`);
    } else if (q.type === 'choice') {
      if (!isObject(q.criteria) || Object.keys(q.criteria).length < 2) return openrouterError(400, `questions.${name}.criteria: Expected at least 2 choices`);
      const bad = Object.entries(q.criteria).find(([, d]) => typeof d !== 'string');
      if (bad) return openrouterError(400, `questions.${name}.criteria.${bad[0]}: Expected string, received ${bad[1] === null ? 'null' : typeof bad[1]}`);
    } else if (q.type === 'score') {
      if (!Array.isArray(q.criteria) || q.criteria.length < 2 || !q.criteria.every((c) => typeof c === 'string')) return openrouterError(400, `questions.${name}.criteria: Expected an array of at least 2 strings`);
    } else return openrouterError(400, `questions.${name}.type: Invalid discriminator value`);
    if (refuses(q.instructions)) continue;
    if (q.type === 'noul') answers[name] = { type: 'noul', noul: yesProbability(state, q.instructions) };
    else if (q.type === 'choice') {
      const labels = Object.keys(q.criteria as Record<string, string>);
      const d = choose(state, labels);
      answers[name] = { type: 'choice', choice: labels[d.pick], ...(sparse ? {} : { confidence: d.confidence, probabilities: Object.fromEntries(labels.map((l, i) => [l, d.probs[i]])) }) };
    } else {
      const levels = q.criteria as string[];
      const d = rate(state, levels.map((l) => l.split(':')[0]));
      answers[name] = {
        type: 'score',
        score: expected(d.probs),
        ...(sparse ? {} : { confidence: d.confidence, probabilities: Object.fromEntries(levels.map((_, i) => [String(i), d.probs[i]])), legend: Object.fromEntries(levels.map((l, i) => [String(i), l])) }),
      };
    }
  }
  const output = Object.keys(answers).length;
  const cost = Math.round((tokens * OPENROUTER_INPUT_COST + output * OPENROUTER_OUTPUT_COST) * 1e9) / 1e9;
  return json(200, { id: `gen-${ctx.nextId()}`, provider: 'TypeSafe', model: body.model, answers, usage: { input_tokens: tokens, output_tokens: output, cost } });
}

export const openrouter: FormatModule = {
  format: 'openrouter',
  route(method, path, body) {
    if (method === 'POST' && path === '/api/alpha/decisions') return { model: isObject(body) && typeof body.model === 'string' ? body.model : undefined, handle: decisions };
    if (path.startsWith('/api/v1/')) return openai.route(method, path.slice(4), body);
    return undefined;
  },
  authenticate(ctx) {
    const auth = ctx.headers.authorization;
    const key = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1] : undefined;
    if (!key) return openrouterError(401, 'No auth credentials found');
    if (key.startsWith('invalid')) return openrouterError(401, 'User not found.');
    return undefined;
  },
  error: (status, message) => openrouterError(status, message),
  notFound: () => openrouterError(404, 'Not Found'),
};
