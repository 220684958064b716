// Bedrock InvokeModel for embedding models (`POST /model/{modelId}/invoke`): Amazon Titan Text
// Embeddings (v1: `{inputText}`, 1536 dimensions; v2: `{inputText, dimensions: 256|512|1024,
// normalize, embeddingTypes}`, 1024 by default) and Cohere Embed v3 (`{texts, input_type,
// truncate, embedding_types}`, 1024 dimensions). Vectors come from embeddings.ts; a model id ending
// in `-dim<N>` has N dimensions.
import { embedText, modelDimensions } from './embeddings.ts';
import { countWords, isObject } from './text.ts';
import type { JsonObject, Reply, RequestContext } from './types.ts';
import { json } from './reply.ts';

type Fail = (status: number, message: string) => Reply;

const TITAN_V1 = /^amazon\.titan-embed-text-v1/;
const TITAN_V2 = /^amazon\.titan-embed-text-v2/;
const COHERE = /^cohere\.embed-/;

export function isBedrockEmbeddingModel(model: string): boolean {
  return TITAN_V1.test(model) || TITAN_V2.test(model) || COHERE.test(model);
}

function dimsFor(model: string, fallback: number): number {
  return /-dim[0-9]+$/.test(model) ? modelDimensions(model) : fallback;
}

function unknownKey(body: JsonObject, allowed: string[]): string | undefined {
  return Object.keys(body).find((k) => !allowed.includes(k));
}

function titan(model: string, body: JsonObject, fail: Fail): Reply {
  const v2 = TITAN_V2.test(model);
  const extra = unknownKey(body, v2 ? ['inputText', 'dimensions', 'normalize', 'embeddingTypes'] : ['inputText']);
  if (extra) return fail(400, `Malformed input request: extraneous key [${extra}] is not permitted, please reformat your input and try again.`);
  if (typeof body.inputText !== 'string' || body.inputText === '') return fail(400, 'Malformed input request: #: required key [inputText] not found, please reformat your input and try again.');
  let dims = dimsFor(model, v2 ? 1024 : 1536);
  if (body.dimensions !== undefined) {
    if (![256, 512, 1024].includes(body.dimensions as number)) return fail(400, 'Malformed input request: #/dimensions: 256, 512 or 1024 expected, please reformat your input and try again.');
    dims = body.dimensions as number;
  }
  const types = body.embeddingTypes ?? ['float'];
  if (!Array.isArray(types) || !types.every((t) => t === 'float' || t === 'binary')) return fail(400, 'Malformed input request: #/embeddingTypes: float or binary expected.');
  const v = Array.from(embedText(body.inputText, dims));
  const byType: JsonObject = {};
  if (types.includes('float')) byType.float = v;
  if (types.includes('binary')) byType.binary = v.map((x) => (x > 0 ? 1 : 0));
  return json(200, {
    embedding: v,
    inputTextTokenCount: countWords(body.inputText),
    ...(v2 && { embeddingsByType: byType }),
  });
}

function cohere(model: string, body: JsonObject, fail: Fail): Reply {
  const extra = unknownKey(body, ['texts', 'input_type', 'truncate', 'embedding_types', 'images']);
  if (extra) return fail(400, `Malformed input request: extraneous key [${extra}] is not permitted, please reformat your input and try again.`);
  const texts = body.texts;
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96 || !texts.every((t) => typeof t === 'string')) {
    return fail(400, 'Malformed input request: #/texts: expected a list of 1 to 96 strings, please reformat your input and try again.');
  }
  if (typeof body.input_type !== 'string') return fail(400, 'Malformed input request: #: required key [input_type] not found, please reformat your input and try again.');
  const dims = dimsFor(model, 1024);
  const vectors = (texts as string[]).map((t) => Array.from(embedText(t, dims)));
  const types = body.embedding_types;
  const id = `mock-embed-${countWords((texts as string[]).join(' '))}-${vectors.length}`;
  if (types === undefined) return json(200, { id, texts, embeddings: vectors, response_type: 'embeddings_floats' });
  if (!Array.isArray(types) || !types.every((t) => t === 'float' || t === 'int8')) return fail(400, 'Malformed input request: #/embedding_types: float or int8 expected.');
  const embeddings: JsonObject = {};
  if (types.includes('float')) embeddings.float = vectors;
  if (types.includes('int8')) embeddings.int8 = vectors.map((v) => v.map((x) => Math.round(x * 127)));
  return json(200, { id, texts, embeddings, response_type: 'embeddings_by_type' });
}

export function invokeEmbedding(model: string, ctx: RequestContext, fail: Fail): Reply {
  if (ctx.badJson || !isObject(ctx.body)) return fail(400, 'Malformed input request, please reformat your input and try again.');
  return COHERE.test(model) ? cohere(model, ctx.body, fail) : titan(model, ctx.body, fail);
}
