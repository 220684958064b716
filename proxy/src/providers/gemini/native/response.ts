// Unified chat completion → native Gemini GenerateContentResponse: the inverse of ../response.ts.
// Signatures kept in reasoning_details go back on the parts ../parts.ts took them from, so a client
// replaying the turn hands them to the next request unchanged.
import type { AssistantMessage, ChatChoice, ChatResponse, FinishReason, ReasoningDetail, Usage } from '../../../unified/chat.ts';
import type {
  GeminiCandidate,
  GeminiFinishReason,
  GeminiGenerateContentResponse,
  GeminiPart,
  GeminiUsageMetadata,
} from '../types.ts';

export function toGeminiResponse(res: ChatResponse, model: string): GeminiGenerateContentResponse {
  const out: GeminiGenerateContentResponse = { candidates: res.choices.map(toCandidate) };
  if (res.usage) out.usageMetadata = toUsageMetadata(res.usage);
  out.modelVersion = model;
  out.responseId = res.id;
  return out;
}

function toCandidate(choice: ChatChoice): GeminiCandidate {
  const parts = messageParts(choice.message);
  const finish = toGeminiFinishReason(choice.finish_reason);
  const candidate: GeminiCandidate = {};
  // A blocked candidate has no content at all in Gemini's answers; an empty answer has an empty text part.
  if (parts.length || finish !== 'SAFETY') candidate.content = { role: 'model', parts: parts.length ? parts : [{ text: '' }] };
  if (finish) candidate.finishReason = finish;
  candidate.index = choice.index;
  return candidate;
}

/** Thought parts, then the answer text, then function calls: the order Gemini answers in. */
function messageParts(msg: AssistantMessage): GeminiPart[] {
  const details = msg.reasoning_details ?? [];
  const calls = msg.tool_calls ?? [];
  const callIds = new Set(calls.map((call) => call.id));
  const parts = thoughtParts(details, msg.reasoning);

  const text = msg.content || msg.refusal || '';
  const textSignatures = details.filter(isSignature).filter((d) => d.id === undefined || !callIds.has(d.id));
  parts.push(...textParts(text, textSignatures));

  for (const call of calls) {
    const signature = details.find((d) => isSignature(d) && d.id === call.id)?.data;
    parts.push(functionCallPart({ id: call.id, ...call.function }, signature));
  }
  return parts;
}

export function isSignature(d: ReasoningDetail): d is ReasoningDetail & { data: string } {
  return d.type === 'reasoning.encrypted' && !!d.data;
}

/**
 * The answer text carrying the first signature not tied to a function call (../parts.ts reads a
 * signed text part that way). Extra signatures have no part of their own in Gemini's shape: each
 * rides an empty text part, as Gemini itself sends a closing signature.
 */
export function textParts(text: string, signatures: Array<{ data: string }>): GeminiPart[] {
  if (!text && !signatures.length) return [];
  const [first, ...rest] = signatures;
  return [
    first ? { text, thoughtSignature: first.data } : { text },
    ...rest.map((s): GeminiPart => ({ text: '', thoughtSignature: s.data })),
  ];
}

/**
 * reasoning.text / reasoning.summary details → thought parts (with their signatures); a plain
 * `reasoning` string when there are no such details (providers that send only that).
 */
export function thoughtParts(details: ReasoningDetail[], reasoning: string | undefined): GeminiPart[] {
  const parts: GeminiPart[] = [];
  for (const d of details) {
    if (d.type === 'reasoning.text') {
      parts.push({ text: d.text ?? '', thought: true, ...(d.signature && { thoughtSignature: d.signature }) });
    } else if (d.type === 'reasoning.summary') {
      parts.push({ text: d.summary ?? d.text ?? '', thought: true });
    }
  }
  if (!parts.length && reasoning) parts.push({ text: reasoning, thought: true });
  return parts;
}

export function functionCallPart(
  call: { id?: string; name: string; arguments?: string },
  signature: string | undefined,
): GeminiPart {
  return {
    functionCall: { ...(call.id && { id: call.id }), name: call.name, args: parseArgs(call.arguments) },
    ...(signature && { thoughtSignature: signature }),
  };
}

/** `args` must be a JSON object; arguments that are not one (a model's malformed output) become `{}`. */
export function parseArgs(json: string | undefined): Record<string, unknown> {
  if (!json?.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  return {};
}

/** Gemini reports STOP after function calls too; unknown reasons are OTHER; null is left out. */
export function toGeminiFinishReason(reason: FinishReason | null | undefined): GeminiFinishReason | undefined {
  switch (reason) {
    case null:
    case undefined:
      return undefined;
    case 'stop':
    case 'tool_calls':
    case 'function_call':
      return 'STOP';
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return 'OTHER';
  }
}

/** Unified usage counts reasoning inside completion tokens; Gemini counts thoughts apart. */
export function toUsageMetadata(usage: Usage): GeminiUsageMetadata {
  const thoughts = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const meta: GeminiUsageMetadata = {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: Math.max(0, usage.completion_tokens - thoughts),
    totalTokenCount: usage.total_tokens,
  };
  if (thoughts > 0) meta.thoughtsTokenCount = thoughts;
  if (cached > 0) meta.cachedContentTokenCount = cached;
  return meta;
}
