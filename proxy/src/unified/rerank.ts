// Unified rerank: score documents against a query, best first. The shape follows the reference
// gateway's /v1/rerank (Cohere-style request; results carry the original document index).
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ExtraFields, type Usage } from './chat.ts';

export const RerankDocumentSchema = Type.Object(
  {
    text: Type.String({ minLength: 1 }),
    id: Type.Optional(Type.String({ minLength: 1 })),
    meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);

export const RerankRequestSchema = Type.Object(
  {
    ...GatewayFields,
    query: Type.String({ minLength: 1 }),
    documents: Type.Array(Type.Union([Type.String({ minLength: 1 }), RerankDocumentSchema]), { minItems: 1 }),
    top_n: Type.Optional(Type.Integer({ minimum: 1 })),
    max_tokens_per_doc: Type.Optional(Type.Integer({ minimum: 1 })),
    return_documents: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

export type RerankDocument = Static<typeof RerankDocumentSchema>;
export type RerankRequest = Static<typeof RerankRequestSchema>;

export interface RerankResult {
  /** Index into the request's `documents`. */
  index: number;
  relevance_score: number;
  document?: RerankDocument;
}

export interface RerankResponse {
  id?: string;
  /** Ordered by relevance_score, highest first. */
  results: RerankResult[];
  model: string;
  usage?: Usage & { search_units?: number };
  extra_fields?: ExtraFields;
}

export function documentText(doc: RerankRequest['documents'][number]): string {
  return typeof doc === 'string' ? doc : doc.text;
}
