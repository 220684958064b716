// The System One decisions shape (POST /v1/systemone: TypeSafe's Jev, Ollama, Fireworks, Upstage,
// LiteLLM): a `state` (a text or any JSON) and a map of named questions, `noul` (yes/no),
// `choice` (criteria: label -> description or null) and `score` (criteria: levels, low to high).
// Answers are keyed by question name; a question the model could not answer is missing.
// Translated both ways to and from OpenAI's Decisions shape (unified/decisions.ts), all pure:
// - OpenAI -> System One, for providers that speak System One (toSystemOne, fromSystemOneAnswer);
// - System One -> OpenAI, for clients that speak it (systemOneToUnified, toSystemOneAnswer).
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ExtraFields } from './chat.ts';
import { invalidRequest } from './errors.ts';
import { isObject, objectList, ShapeError } from './answer-shape.ts';
import {
  openaiDecisionUsage,
  type ChoiceValue,
  type DecisionAnswer,
  type DecisionPart,
  type DecisionQuestion,
  type DecisionRequest,
  type DecisionResponse,
} from './decisions.ts';

const Open = { additionalProperties: true } as const;
/** A state or instructions: a text, or structured data. */
const Content = Type.Union([Type.String({ minLength: 1 }), Type.Object({}, Open), Type.Array(Type.Unknown(), { minItems: 1 })]);
const SystemOneQuestion = Type.Union([
  Type.Object({ type: Type.Literal('noul'), instructions: Content, criteria: Type.Optional(Type.Object({ true: Type.Optional(Type.String()), false: Type.Optional(Type.String()) }, Open)) }, Open),
  Type.Object({ type: Type.Literal('choice'), instructions: Content, criteria: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), { minProperties: 2 }) }, Open),
  Type.Object({ type: Type.Literal('score'), instructions: Content, criteria: Type.Array(Type.String({ minLength: 1 }), { minItems: 2 }) }, Open),
]);

export const SystemOneRequestSchema = Type.Object(
  {
    ...GatewayFields,
    state: Content,
    questions: Type.Record(Type.String({ minLength: 1 }), SystemOneQuestion, { minProperties: 1 }),
  },
  Open,
);
export type SystemOneRequest = Static<typeof SystemOneRequestSchema>;
type SystemOneQuestionT = Static<typeof SystemOneQuestion>;

/** Probabilities and confidence are left out only where the provider left them out (OpenRouter). */
export type SystemOneAnswer =
  | { type: 'noul'; noul: number }
  | { type: 'choice'; choice: string; probabilities?: Record<string, number>; confidence?: number }
  | { type: 'score'; score: number; legend: Record<string, string>; probabilities?: Record<string, number>; confidence?: number };

export interface SystemOneResponse {
  model: string;
  answers: Record<string, SystemOneAnswer>;
  /** `cost`: the provider's own price in USD, where it reports one (OpenRouter). */
  usage: { input_tokens: number; output_tokens: number; cost?: number };
  extra_fields?: ExtraFields;
}

// ------------------------------------------------------------ OpenAI shape -> System One provider

/** Each question's System One name: its own, else `question_<n>` (1-based), never clashing. */
export function questionNames(questions: readonly DecisionQuestion[]): string[] {
  const taken = new Set(questions.flatMap((q) => (q.name ? [q.name] : [])));
  return questions.map((q, i) => {
    if (q.name) return q.name;
    let name = `question_${i + 1}`;
    while (taken.has(name)) name += '_';
    taken.add(name);
    return name;
  });
}

/** Parts as System One content: the text when all are text, else a list of texts and JSON values. Images cannot go: System One decides about text. */
function partsContent(parts: readonly DecisionPart[], at: string): string | unknown[] {
  const out: unknown[] = parts.map((p, i) => {
    if (p.type === 'input_text') return p.text;
    if (p.type === 'input_json') return p.data;
    throw invalidRequest(`${at}[${i}]: images cannot be sent to a System One decision provider (it decides about text and JSON only)`, `${at}[${i}]`);
  });
  return out.every((x) => typeof x === 'string') ? (out as string[]).join('\n') : out;
}

function toolOutput(output: unknown, at: string): unknown {
  return typeof output === 'string' ? output : partsContent(output as DecisionPart[], at);
}

/** The input as a System One state: a text as itself, a conversation as `{messages: [...]}` with tool calls and results as entries of their own. */
export function stateOf(input: DecisionRequest['input']): unknown {
  if (typeof input === 'string') return input;
  const messages = input.map((item, i) => {
    const at = `input[${i}]`;
    if ('role' in item) {
      const content = item.content;
      if (typeof content === 'string') return { role: item.role, content };
      const parts = (content as { type: string; text?: string; refusal?: string }[]).map((p) =>
        p.type === 'output_text' ? ({ type: 'input_text', text: p.text ?? '' } as DecisionPart) : p.type === 'refusal' ? ({ type: 'input_text', text: p.refusal ?? '' } as DecisionPart) : (p as DecisionPart),
      );
      return { role: item.role, content: partsContent(parts, `${at}.content`) };
    }
    const tool = item as Record<string, unknown>;
    if (tool.type === 'function_call' || tool.type === 'custom_tool_call') {
      return { type: tool.type, call_id: tool.call_id, name: tool.name, ...(tool.type === 'function_call' ? { arguments: tool.arguments } : { input: tool.input }) };
    }
    return { type: tool.type, call_id: tool.call_id, output: toolOutput(tool.output, `${at}.output`) };
  });
  return { messages };
}

/** A choice value as a System One criterion label. */
const label = (v: ChoiceValue): string => String(v);

/** The System One request for a unified decision request. */
export function toSystemOne(req: DecisionRequest, model: string): Record<string, unknown> {
  const names = questionNames(req.questions);
  const questions: Record<string, unknown> = {};
  req.questions.forEach((q, i) => {
    const at = `questions[${i}]`;
    const instructions = typeof q.instructions === 'string' ? q.instructions : partsContent(q.instructions, `${at}.instructions`);
    if (q.type === 'predicate') questions[names[i]] = { type: 'noul', instructions };
    else if (q.type === 'choice') {
      const criteria: Record<string, string | null> = {};
      q.choices!.forEach((c, j) => {
        // System One labels are strings: a string and a boolean of the same text cannot both go.
        if (Object.hasOwn(criteria, label(c.value))) throw invalidRequest(`${at}.choices[${j}].value: '${label(c.value)}' is given both as a string and a boolean, which a System One provider cannot tell apart`, `${at}.choices[${j}].value`);
        criteria[label(c.value)] = c.description ?? null;
      });
      questions[names[i]] = { type: 'choice', instructions, criteria };
    } else {
      questions[names[i]] = { type: 'score', instructions, criteria: q.levels!.map((l) => (l.description ? `${l.label}: ${l.description}` : l.label)) };
    }
  });
  return { model, state: stateOf(req.input), questions };
}

const num = (v: unknown, at: string): number => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ShapeError(`'${at}' is not a number`);
  return v;
};

function probabilities(v: unknown, at: string): Record<string, unknown> {
  if (!isObject(v)) throw new ShapeError(`'${at}.probabilities' is not an object`);
  return v;
}

/** How strictly an answer is read: OpenRouter's variant may leave out a choice's or score's confidence and probabilities. */
export interface AnswerReading {
  optionalDistribution?: boolean;
}

/** A confidence, or null where the provider may leave it out and did. */
function confidenceOf(a: Record<string, unknown>, at: string, how: AnswerReading): number | null {
  if (how.optionalDistribution && a.confidence === undefined) return null;
  return num(a.confidence, `${at}.confidence`);
}

/** The probabilities by label, or undefined where the provider may leave them out and did. */
function probabilitiesOf(a: Record<string, unknown>, at: string, how: AnswerReading): Record<string, unknown> | undefined {
  if (how.optionalDistribution && a.probabilities === undefined) return undefined;
  return probabilities(a.probabilities, at);
}

/** The provider's own price of the answer in USD (OpenRouter's `usage.cost`), when it reports one. */
function reportedCost(usage: Record<string, unknown>): number | undefined {
  const c = usage.cost;
  return typeof c === 'number' && Number.isFinite(c) && c >= 0 ? c : undefined;
}

/**
 * A System One provider's answer in OpenAI's shape, in the request's question order; an unanswered
 * question is a refusal. A distribution the provider left out (OpenRouter) is not invented: the
 * confidence is null and the probabilities an empty list.
 */
export function fromSystemOneAnswer(body: unknown, req: DecisionRequest, how: AnswerReading = {}): DecisionResponse {
  if (!isObject(body) || !isObject(body.answers)) throw new ShapeError(`'answers' is not an object`);
  const answers = body.answers;
  const names = questionNames(req.questions);
  const out: DecisionAnswer[] = req.questions.map((q, i) => {
    const name = q.name ?? null;
    const a = Object.hasOwn(answers, names[i]) ? answers[names[i]] : undefined;
    if (!isObject(a)) return { type: 'refusal', name };
    const at = `answers.${names[i]}`;
    if (q.type === 'predicate') return { type: 'predicate', name, probability: num(a.noul, `${at}.noul`) };
    const probs = probabilitiesOf(a, at, how);
    if (q.type === 'choice') {
      const choices = q.choices!;
      const picked = choices.find((c) => label(c.value) === a.choice);
      if (!picked) throw new ShapeError(`'${at}.choice' is not one of the choices asked`);
      return {
        type: 'choice',
        name,
        choice: picked.value,
        confidence: confidenceOf(a, at, how),
        probabilities: probs ? choices.map((c) => ({ value: c.value, probability: typeof probs[label(c.value)] === 'number' ? (probs[label(c.value)] as number) : 0 })) : [],
      };
    }
    const levels = q.levels!;
    return {
      type: 'score',
      name,
      score: num(a.score, `${at}.score`),
      confidence: confidenceOf(a, at, how),
      // Keyed by level index (the legend maps the index to the level).
      probabilities: probs
        ? levels.map((l, idx) => {
            const p = probs[String(idx)] ?? probs[l.label];
            return { label: l.label, value: idx, probability: typeof p === 'number' ? p : 0 };
          })
        : [],
    };
  });
  const usage = isObject(body.usage) ? body.usage : {};
  const input = typeof usage.input_tokens === 'number' ? usage.input_tokens : 0;
  const output = typeof usage.output_tokens === 'number' ? usage.output_tokens : 0;
  const cost = reportedCost(usage);
  return { answers: out, model: typeof body.model === 'string' ? body.model : '', usage: { ...openaiDecisionUsage(input, output), ...(cost !== undefined ? { cost } : {}) } };
}

// ------------------------------------------------------------ System One client -> OpenAI shape

/** System One content as OpenAI question parts: a text stays a text, JSON becomes `input_json` parts. */
function asParts(content: unknown): string | DecisionPart[] {
  if (typeof content === 'string') return content;
  const items = Array.isArray(content) ? content : [content];
  return items.map((x): DecisionPart => {
    if (typeof x === 'string') return { type: 'input_text', text: x };
    if (isObject(x)) return { type: 'input_json', data: x };
    return { type: 'input_text', text: JSON.stringify(x) };
  });
}

function fromSystemOneQuestion(name: string, q: SystemOneQuestionT): DecisionQuestion {
  const instructions = asParts(q.instructions);
  if (q.type === 'noul') {
    // A noul's criteria say what true and false mean: they go with the instructions.
    const extra = [q.criteria?.true && `True means: ${q.criteria.true}`, q.criteria?.false && `False means: ${q.criteria.false}`].filter((x): x is string => !!x);
    const withCriteria = extra.length === 0 ? instructions : typeof instructions === 'string' ? [instructions, ...extra].join('\n') : [...instructions, ...extra.map((text): DecisionPart => ({ type: 'input_text', text }))];
    return { type: 'predicate', name, instructions: withCriteria };
  }
  if (q.type === 'choice') return { type: 'choice', name, instructions, choices: Object.entries(q.criteria).map(([value, d]) => ({ value, ...(d ? { description: d } : {}) })) };
  return { type: 'score', name, instructions, levels: q.criteria.map((l) => ({ label: l })) };
}

/** A System One request as the unified (OpenAI-shape) decision request. */
export function systemOneToUnified(req: SystemOneRequest): DecisionRequest {
  const { state, questions, ...rest } = req;
  const input: DecisionRequest['input'] =
    typeof state === 'string' ? state : [{ role: 'user', content: isObject(state) || (Array.isArray(state) && state.every(isObject)) ? [{ type: 'input_json', data: state as Record<string, unknown> }] : JSON.stringify(state) }];
  return { ...rest, input, questions: Object.entries(questions).map(([name, q]) => fromSystemOneQuestion(name, q)) };
}

/** A unified decision answer in the System One shape, keyed by question name; a refusal is left out, as System One leaves out what it could not answer. */
export function toSystemOneAnswer(res: DecisionResponse, req: DecisionRequest): SystemOneResponse {
  objectList(res, 'answers');
  const names = questionNames(req.questions);
  const answers: Record<string, SystemOneAnswer> = {};
  res.answers.forEach((a, i) => {
    const name = a.name ?? names[i];
    // A distribution the provider did not report stays out, as it came.
    const dist = (probabilities: Record<string, number>, confidence: number | null) => ({
      ...(a.type !== 'predicate' && a.type !== 'refusal' && a.probabilities.length > 0 ? { probabilities } : {}),
      ...(confidence !== null ? { confidence } : {}),
    });
    if (a.type === 'predicate') answers[name] = { type: 'noul', noul: a.probability };
    else if (a.type === 'choice') answers[name] = { type: 'choice', choice: label(a.choice), ...dist(Object.fromEntries(a.probabilities.map((p) => [label(p.value), p.probability])), a.confidence) };
    else if (a.type === 'score') {
      answers[name] = {
        type: 'score',
        score: a.score,
        legend: Object.fromEntries(req.questions[i].levels?.map((l, idx) => [String(idx), l.label]) ?? a.probabilities.map((p) => [String(p.value), p.label])),
        ...dist(Object.fromEntries(a.probabilities.map((p) => [String(p.value), p.probability])), a.confidence),
      };
    }
  });
  const u = res.usage as Partial<DecisionResponse['usage']> | undefined;
  return {
    model: res.model,
    answers,
    usage: { input_tokens: u?.input_tokens ?? 0, output_tokens: u?.output_tokens ?? 0, ...(typeof u?.cost === 'number' ? { cost: u.cost } : {}) },
  };
}
