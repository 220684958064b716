// Gemini response parts → the pieces of a unified assistant message. Shared by the whole-response
// and the streaming translators so both name tool calls and carry signatures the same way.
import type { ReasoningDetail, ToolCall } from '../../unified/chat.ts';
import type { GeminiPart } from './types.ts';

export interface PartsDigest {
  /** Answer text, or undefined when no non-thought text part was present. */
  text: string | undefined;
  /** Thought-summary text, or undefined when no thought part was present. */
  reasoning: string | undefined;
  /**
   * Thought signatures, in part order, in the shape request.ts replays them from:
   * thought part → `reasoning.text` (+ signature); signed functionCall → `reasoning.encrypted` with the
   * tool call's id; signed answer text → `reasoning.encrypted` without id.
   */
  details: ReasoningDetail[];
  toolCalls: ToolCall[];
}

/**
 * @param candidate choice index, used in generated tool call ids
 * @param firstCall number of calls this candidate already made (streams count across chunks)
 */
export function digestParts(parts: GeminiPart[], candidate: number, firstCall = 0): PartsDigest {
  const digest: PartsDigest = { text: undefined, reasoning: undefined, details: [], toolCalls: [] };
  for (const part of parts) {
    if (part.functionCall) {
      const { functionCall: fc } = part;
      const id = fc.id || `call_${candidate}_${firstCall + digest.toolCalls.length}`;
      digest.toolCalls.push({ id, type: 'function', function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) } });
      if (part.thoughtSignature) digest.details.push({ type: 'reasoning.encrypted', id, data: part.thoughtSignature });
    } else if (part.thought) {
      const text = part.text ?? '';
      digest.reasoning = (digest.reasoning ?? '') + text;
      digest.details.push({
        type: 'reasoning.text',
        text,
        ...(part.thoughtSignature && { signature: part.thoughtSignature }),
      });
    } else if (part.text !== undefined) {
      digest.text = (digest.text ?? '') + part.text;
      if (part.thoughtSignature) digest.details.push({ type: 'reasoning.encrypted', data: part.thoughtSignature });
    }
    // Other parts (inline images, code execution) have no chat-completions equivalent.
  }
  return digest;
}
