// OpenAI wire format: Moderations (POST /v1/moderations). Deterministic verdicts: a text is flagged
// in a category when it contains that category's trigger word (TRIGGERS); every other score is tiny.
// A string or each string of a list is one result; a list of multimodal parts is one result.

import { randomUUID } from 'node:crypto';
import { isNonexistentModel } from './models.ts';
import { json } from './reply.ts';
import { isObject } from './text.ts';
import { bad, invalidType, missing, openaiError, PARSE_ERROR } from './openai.ts';
import type { Reply, RequestContext } from './types.ts';

const PARAMS = new Set(['input', 'model']);
const DEFAULT_MODEL = 'omni-moderation-latest';

/** OpenAI's categories, and the input types each is scored on (images only for some). */
const CATEGORIES: Record<string, string[]> = {
  harassment: ['text'],
  'harassment/threatening': ['text'],
  hate: ['text'],
  'hate/threatening': ['text'],
  illicit: ['text'],
  'illicit/violent': ['text'],
  'self-harm': ['text', 'image'],
  'self-harm/intent': ['text', 'image'],
  'self-harm/instructions': ['text', 'image'],
  sexual: ['text', 'image'],
  'sexual/minors': ['text'],
  violence: ['text', 'image'],
  'violence/graphic': ['text', 'image'],
};

/** Words that flag a text (lower case, anywhere in it). */
export const TRIGGERS: Record<string, string> = {
  harassment: 'idiot',
  hate: 'hateful',
  illicit: 'steal',
  'self-harm': 'hurt myself',
  violence: 'kill',
};

interface Input {
  text: string;
  images: number;
}

function result(input: Input): Record<string, unknown> {
  const lower = input.text.toLowerCase();
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const [name, types] of Object.entries(CATEGORIES)) {
    const hit = TRIGGERS[name] !== undefined && lower.includes(TRIGGERS[name]);
    categories[name] = hit;
    scores[name] = hit ? 0.91 : 0.0001;
    applied[name] = input.images > 0 ? types : ['text'];
  }
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores, category_applied_input_types: applied };
}

/** The inputs to score, or the error OpenAI answers. */
function inputsOf(input: unknown): Input[] | Reply {
  if (input === undefined || input === null) return missing('input');
  if (typeof input === 'string') return [{ text: input, images: 0 }];
  if (!Array.isArray(input) || input.length === 0) return invalidType('input', 'a string or array', input);
  if (input.every((s) => typeof s === 'string')) return (input as string[]).map((text) => ({ text, images: 0 }));
  const one: Input = { text: '', images: 0 };
  for (let i = 0; i < input.length; i++) {
    const part: unknown = input[i];
    if (!isObject(part)) return invalidType(`input[${i}]`, 'an object', part);
    if (part.type === 'text' && typeof part.text === 'string') one.text += (one.text ? ' ' : '') + part.text;
    else if (part.type === 'image_url' && isObject(part.image_url) && typeof part.image_url.url === 'string') one.images++;
    else return bad(`Invalid value for 'input[${i}].type': expected 'text' or 'image_url'.`, `input[${i}].type`, 'invalid_value');
  }
  return [one];
}

export function moderations(ctx: RequestContext): Reply {
  if (ctx.badJson) return bad(PARSE_ERROR);
  const body = ctx.body;
  if (!isObject(body)) return bad('Invalid type for request body: expected an object.');
  for (const k of Object.keys(body)) if (!PARAMS.has(k)) return bad(`Unrecognized request argument supplied: ${k}`);
  const model = body.model ?? DEFAULT_MODEL;
  if (typeof model !== 'string') return invalidType('model', 'a string', model);
  if (isNonexistentModel(model)) return openaiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, { code: 'model_not_found' });
  const inputs = inputsOf(body.input);
  if (!Array.isArray(inputs)) return inputs;
  return json(200, { id: `modr-${randomUUID().replace(/-/g, '').slice(0, 24)}`, model, results: inputs.map(result) });
}
