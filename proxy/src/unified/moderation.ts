// Unified moderation: OpenAI's /v1/moderations request and answer (one result per input: whether
// it is flagged, and per category a verdict and a score). `model` is required here, as the
// gateway routes by it (`openai/omni-moderation-latest`).
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ExtraFields } from './chat.ts';

/** A multimodal input part: text, or an image by URL (data URLs included). */
const ModerationPartSchema = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }, { additionalProperties: true }),
  Type.Object({ type: Type.Literal('image_url'), image_url: Type.Object({ url: Type.String({ minLength: 1 }) }, { additionalProperties: true }) }, { additionalProperties: true }),
]);

export const ModerationRequestSchema = Type.Object(
  {
    ...GatewayFields,
    input: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 }), Type.Array(ModerationPartSchema, { minItems: 1 })]),
  },
  { additionalProperties: true },
);
export type ModerationRequest = Static<typeof ModerationRequestSchema>;

export interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
  category_applied_input_types?: Record<string, string[]>;
}

export interface ModerationResponse {
  id: string;
  model: string;
  results: ModerationResult[];
  extra_fields?: ExtraFields;
}
