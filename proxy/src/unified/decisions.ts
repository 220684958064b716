// Unified decisions: OpenAI's Decisions API (POST /v1/decisions). An input (a text, or messages with
// function calls and their outputs: the annotated tool calls a decision is evaluated against) and
// an ordered list of questions: predicate (how likely a statement is true), choice (one of 2-255
// typed values) and score (one of ordered levels). Answers come back in question order, each with
// its probabilities (and a confidence for choice and score), or a refusal.
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ExtraFields, type Usage } from './chat.ts';
import { invalidRequest } from './errors.ts';
import { isObject } from './answer-shape.ts';

const Open = { additionalProperties: true } as const;
const Json = Type.Object({ type: Type.Literal('input_json'), data: Type.Union([Type.Object({}, Open), Type.Array(Type.Object({}, Open))]) }, Open);
const Text = Type.Object({ type: Type.Literal('input_text'), text: Type.String() }, Open);
const Image = Type.Object({ type: Type.Literal('input_image'), image_url: Type.String({ minLength: 1 }) }, Open);
const Part = Type.Union([Text, Image, Json]);
const OutputPart = Type.Union([Type.Object({ type: Type.Literal('output_text'), text: Type.String() }, Open), Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() }, Open)]);

const Message = Type.Object(
  {
    type: Type.Optional(Type.Literal('message')),
    role: Type.Union([Type.Literal('user'), Type.Literal('developer'), Type.Literal('system'), Type.Literal('assistant')]),
    content: Type.Union([Type.String(), Type.Array(Type.Union([Part, OutputPart]))]),
  },
  Open,
);
const ToolOutput = Type.Union([Type.String(), Type.Array(Type.Union([Text, Image]))]);
const FunctionCall = Type.Object({ type: Type.Literal('function_call'), call_id: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1 }), arguments: Type.String() }, Open);
const FunctionCallOutput = Type.Object({ type: Type.Literal('function_call_output'), call_id: Type.String({ minLength: 1 }), output: ToolOutput }, Open);
const CustomToolCall = Type.Object({ type: Type.Literal('custom_tool_call'), call_id: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1 }), input: Type.String() }, Open);
const CustomToolCallOutput = Type.Object({ type: Type.Literal('custom_tool_call_output'), call_id: Type.String({ minLength: 1 }), output: ToolOutput }, Open);
const InputItem = Type.Union([Message, FunctionCall, FunctionCallOutput, CustomToolCall, CustomToolCallOutput]);

const Instructions = Type.Union([Type.String({ minLength: 1 }), Type.Array(Part, { minItems: 1 })]);

/**
 * One question. The fields of each type are checked by checkQuestions (below), so a wrong question
 * gets a 400 naming its own field instead of the union's every branch.
 */
const Question = Type.Object(
  {
    type: Type.Union([Type.Literal('predicate'), Type.Literal('choice'), Type.Literal('score')]),
    instructions: Instructions,
    name: Type.Optional(Type.String({ minLength: 1 })),
    choices: Type.Optional(Type.Array(Type.Object({ value: Type.Union([Type.String(), Type.Boolean()]), description: Type.Optional(Type.String()) }, Open))),
    levels: Type.Optional(Type.Array(Type.Object({ label: Type.String({ minLength: 1 }), description: Type.Optional(Type.String()) }, Open))),
  },
  Open,
);

export const DecisionRequestSchema = Type.Object(
  {
    ...GatewayFields,
    input: Type.Union([Type.String({ minLength: 1 }), Type.Array(InputItem, { minItems: 1 })]),
    questions: Type.Array(Question, { minItems: 1, maxItems: 400 }),
    prompt_cache_key: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    safety_identifier: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  Open,
);
export type DecisionRequest = Static<typeof DecisionRequestSchema>;
export type DecisionQuestion = DecisionRequest['questions'][number];
export type DecisionInput = DecisionRequest['input'];
export type DecisionPart = Static<typeof Part>;

export type ChoiceValue = string | boolean;
export type DecisionAnswer =
  | { type: 'predicate'; name: string | null; probability: number }
  // confidence null and probabilities [] only where the provider did not report them (OpenRouter).
  | { type: 'choice'; name: string | null; choice: ChoiceValue; confidence: number | null; probabilities: { value: ChoiceValue; probability: number }[] }
  | { type: 'score'; name: string | null; score: number; confidence: number | null; probabilities: { label: string; value: number; probability: number }[] }
  | { type: 'refusal'; name: string | null };

export interface DecisionUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** The provider's own price of the answer in USD, where it reports one (OpenRouter): charged as the price. */
  cost?: number;
}

export interface DecisionResponse {
  answers: DecisionAnswer[];
  model: string;
  usage: DecisionUsage;
  extra_fields?: ExtraFields;
}

/** The rules of each question type that the schema does not say, as OpenAI states them. */
export function checkQuestions(questions: readonly DecisionQuestion[]): void {
  const names = new Set<string>();
  questions.forEach((q, i) => {
    const at = `questions[${i}]`;
    if (q.name !== undefined) {
      if (names.has(q.name)) throw invalidRequest(`${at}.name '${q.name}' is used by an earlier question; names must be unique`, `${at}.name`);
      names.add(q.name);
    }
    if (q.type === 'choice') {
      const choices = q.choices;
      if (!choices || choices.length < 2 || choices.length > 255) throw invalidRequest(`${at}.choices: a choice question needs 2 to 255 choices`, `${at}.choices`);
      const seen = new Set<string>();
      choices.forEach((c, j) => {
        // Typed: the string 'true' and the boolean true are different choices.
        const key = `${typeof c.value}:${String(c.value)}`;
        if (seen.has(key)) throw invalidRequest(`${at}.choices[${j}].value repeats an earlier choice; each choice must be unique`, `${at}.choices[${j}].value`);
        seen.add(key);
      });
    } else if (q.choices !== undefined) throw invalidRequest(`${at}.choices is only for choice questions`, `${at}.choices`);
    if (q.type === 'score') {
      const levels = q.levels;
      if (!levels || levels.length < 2) throw invalidRequest(`${at}.levels: a score question needs at least 2 levels`, `${at}.levels`);
    } else if (q.levels !== undefined) throw invalidRequest(`${at}.levels is only for score questions`, `${at}.levels`);
  });
}

/** OpenAI's decision usage as the unified usage the gateway charges; System One's `{input_tokens, output_tokens}` (and OpenRouter's `cost`) reads the same way. */
export function decisionUsage(u: unknown): Usage | undefined {
  if (!isObject(u) || typeof u.input_tokens !== 'number') return undefined;
  const output = typeof u.output_tokens === 'number' ? u.output_tokens : 0;
  const details = isObject(u.input_tokens_details) ? u.input_tokens_details : undefined;
  const cached = details && typeof details.cached_tokens === 'number' ? details.cached_tokens : 0;
  const cost = typeof u.cost === 'number' && Number.isFinite(u.cost) && u.cost >= 0 ? u.cost : undefined;
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: output,
    total_tokens: typeof u.total_tokens === 'number' ? u.total_tokens : u.input_tokens + output,
    ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    ...(cost !== undefined ? { cost } : {}),
  };
}

/** OpenAI's usage object from token counts (System One reports only input and output). */
export function openaiDecisionUsage(input: number, output: number, cached = 0): DecisionUsage {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}
