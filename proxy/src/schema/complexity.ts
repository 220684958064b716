// Config shapes owned by the routing engine. The lead mounts ComplexityClassifierSchema in the
// governance section; the routing rule shapes themselves live in schema/governance.ts.
import { Type, type Static } from '@sinclair/typebox';

export const COMPLEXITY_TIERS = ['SIMPLE', 'MEDIUM', 'COMPLEX'] as const;
export type ComplexityTier = (typeof COMPLEXITY_TIERS)[number];

/** Default cosine similarity below which a request's tier stays unknown. */
export const DEFAULT_SIMILARITY_FLOOR = 0.5;

const Examples = Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 500 });

export const ComplexityClassifierSchema = Type.Object(
  {
    provider: Type.String({ minLength: 1, description: 'Provider that serves the embedding model.' }),
    model: Type.String({ minLength: 1, description: 'Embedding model, e.g. text-embedding-3-small.' }),
    similarity_floor: Type.Optional(
      Type.Number({
        minimum: -1,
        maximum: 1,
        default: DEFAULT_SIMILARITY_FLOOR,
        description: 'Cosine similarity the nearest example must reach, else the tier is unknown.',
      }),
    ),
    examples: Type.Object(
      {
        SIMPLE: Type.Optional(Examples),
        MEDIUM: Type.Optional(Examples),
        COMPLEX: Type.Optional(Examples),
      },
      { additionalProperties: false, description: 'Example prompts per tier; a request takes the tier of its nearest example.' },
    ),
  },
  { additionalProperties: false },
);

export type ComplexityClassifierConfig = Static<typeof ComplexityClassifierSchema>;
