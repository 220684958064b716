// Carries a provider's reasoning_details (thinking signatures, redacted blocks) through a Responses
// client as a reasoning item's `encrypted_content`, so a stateless client (store: false,
// include: ['reasoning.encrypted_content']) can replay them next turn, which Anthropic requires when
// thinking is combined with tool use. Opaque to the client, not encrypted: the text in it is the
// same reasoning the item's summary already shows.
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ReasoningDetailSchema, type ReasoningDetail } from '../chat.ts';
import { invalidRequest } from '../errors.ts';

const PREFIX = 'skybridge.reasoning.v1:';
const DetailsSchema = Type.Array(ReasoningDetailSchema);

/** Fixed key order, so equal details (however they were assembled) encode to the same string. */
const KEYS = ['type', 'id', 'index', 'text', 'summary', 'signature', 'data'] as const;

export function encodeReasoningDetails(details: ReasoningDetail[]): string {
  const canonical = details.map((d) => Object.fromEntries(KEYS.filter((k) => d[k] !== undefined).map((k) => [k, d[k]])));
  return PREFIX + Buffer.from(JSON.stringify(canonical), 'utf8').toString('base64');
}

/**
 * The details this bridge encoded, or undefined for content it did not produce (e.g. OpenAI's own
 * encrypted reasoning, which no other provider can use). Throws when our prefix wraps garbage.
 */
export function decodeReasoningDetails(content: string, param: string): ReasoningDetail[] | undefined {
  if (!content.startsWith(PREFIX)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(content.slice(PREFIX.length), 'base64').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (!Value.Check(DetailsSchema, parsed)) throw invalidRequest('encrypted_content is corrupted', param);
  return parsed;
}
