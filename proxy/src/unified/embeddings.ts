import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields } from './chat.ts';

export const EmbeddingRequestSchema = Type.Object(
  {
    ...GatewayFields,
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1 }),
      Type.Array(Type.Integer(), { minItems: 1 }),
      Type.Array(Type.Array(Type.Integer()), { minItems: 1 }),
    ]),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type EmbeddingRequest = Static<typeof EmbeddingRequestSchema>;

export interface EmbeddingData {
  object: 'embedding';
  index: number;
  /** float[] or, with `encoding_format: base64`, little-endian float32 bytes in base64. */
  embedding: number[] | string;
}

export interface EmbeddingResponse {
  object: 'list';
  data: EmbeddingData[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  extra_fields?: import('./chat.ts').ExtraFields;
}

/** OpenAI's base64 encoding: the vector as little-endian float32 bytes. */
export function encodeEmbedding(vector: number[], format: 'float' | 'base64' | undefined): number[] | string {
  if (format !== 'base64') return vector;
  const buf = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) buf.writeFloatLE(vector[i], i * 4);
  return buf.toString('base64');
}
