// What a passthrough call names and uses, read without understanding the provider's API in full:
// the model a request asks for (its JSON body's `model`, or a `/models/{model}` path segment) and
// the token usage of a JSON answer in any of the usual shapes (OpenAI, Anthropic, Gemini).
import type { Usage } from '../unified/chat.ts';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** The model a request names: body `model` first, else the segment after `/models/` (up to `:`). */
export function requestedModel(rawPath: string, body: unknown): string | undefined {
  const fromBody = record(body)?.model;
  if (typeof fromBody === 'string' && fromBody) return fromBody;
  const m = /\/models\/([^/?:]+)/.exec(rawPath);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
}

/** Usage and model of a parsed JSON answer, when it reports usage. */
export function answerUsage(answer: unknown): { usage: Usage; model?: string } | undefined {
  const a = record(answer);
  if (!a) return undefined;
  const model = typeof a.model === 'string' ? a.model : typeof a.modelVersion === 'string' ? a.modelVersion : undefined;
  const u = record(a.usage);
  if (u) {
    const prompt = num(u.prompt_tokens) || num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens);
    const completion = num(u.completion_tokens) || num(u.output_tokens);
    const total = num(u.total_tokens) || prompt + completion;
    if (total > 0) return { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total }, ...(model && { model }) };
  }
  const g = record(a.usageMetadata);
  if (g) {
    const prompt = num(g.promptTokenCount);
    const completion = num(g.candidatesTokenCount) + num(g.thoughtsTokenCount);
    const total = num(g.totalTokenCount) || prompt + completion;
    if (total > 0) return { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total }, ...(model && { model }) };
  }
  return undefined;
}
