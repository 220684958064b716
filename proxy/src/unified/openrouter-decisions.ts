// OpenRouter's alpha decisions API (POST /api/alpha/decisions): System One's shape with its own
// rules, as its public client (Effect's @effect/ai-openrouter OpenRouterSchema) states them:
// - instructions are a text (System One also takes JSON): parts are joined, JSON as its text;
// - a choice's criteria map each label to a string (System One allows null): a choice without a
//   description is described by its own label;
// - a choice's or score's answer may leave out `confidence` and `probabilities`;
// - usage carries `cost`, what OpenRouter charged in USD;
// - its own request members (`provider` routing preferences, `session_id`, `user`, `trace`) go as given.
// Pure translation on top of unified/systemone.ts.
import type { DecisionRequest, DecisionResponse } from './decisions.ts';
import { fromSystemOneAnswer, toSystemOne } from './systemone.ts';
import { isObject } from './answer-shape.ts';
import { invalidRequest } from './errors.ts';

/** OpenRouter's own request members, passed on when the client gives them: what each must be. */
const OWN_MEMBERS: Record<string, { ok: (v: unknown) => boolean; want: string }> = {
  provider: { ok: isObject, want: 'an object of provider routing preferences' },
  session_id: { ok: (v) => typeof v === 'string', want: 'a string' },
  user: { ok: (v) => typeof v === 'string', want: 'a string' },
  trace: { ok: isObject, want: 'an object' },
};

/** System One instructions as OpenRouter's text: a list's texts as they are, JSON values as JSON. */
function instructionsText(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('\n');
}

/** The OpenRouter decisions request for a unified decision request. */
export function toOpenRouterDecisions(req: DecisionRequest, model: string): Record<string, unknown> {
  const body = toSystemOne(req, model);
  const given = req as Record<string, unknown>;
  for (const [name, rule] of Object.entries(OWN_MEMBERS)) {
    if (given[name] === undefined) continue;
    if (!rule.ok(given[name])) throw invalidRequest(`${name} must be ${rule.want} (OpenRouter's decisions request member)`, name);
    body[name] = given[name];
  }
  const questions = body.questions as Record<string, Record<string, unknown>>;
  for (const q of Object.values(questions)) {
    q.instructions = instructionsText(q.instructions);
    if (q.type === 'choice') {
      const criteria = q.criteria as Record<string, string | null>;
      q.criteria = Object.fromEntries(Object.entries(criteria).map(([k, d]) => [k, d ?? k]));
    }
  }
  return body;
}

/** OpenRouter's answer in OpenAI's shape; its cost goes into usage, where the gateway charges it. */
export function fromOpenRouterDecisions(body: unknown, req: DecisionRequest): DecisionResponse {
  return fromSystemOneAnswer(body, req, { optionalDistribution: true });
}
