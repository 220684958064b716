// OpenAI's Containers API (the sandboxes Code Interpreter and hosted shells run in): the create
// request the gateway checks before it goes upstream, and the container file reference. Only what
// a client gets wrong is checked here (a clear 400 naming the field); everything else the provider
// knows (skills, network policy details) goes on as sent. `provider` is the gateway's: it names
// the provider (see endpoints/provider-resources.ts) and is never forwarded.
import { Type, type Static } from '@sinclair/typebox';

/** Memory tiers OpenAI offers (and prices: governance/pricing/containers.ts). */
export const CONTAINER_MEMORY_LIMITS = ['1g', '4g', '16g', '64g'] as const;
export type ContainerMemoryLimit = (typeof CONTAINER_MEMORY_LIMITS)[number];

export const ContainerCreateSchema = Type.Object(
  {
    provider: Type.Optional(Type.String({ minLength: 1 })),
    name: Type.String({ minLength: 1 }),
    expires_after: Type.Optional(
      Type.Object({ anchor: Type.Literal('last_active_at'), minutes: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    ),
    file_ids: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    memory_limit: Type.Optional(Type.Union(CONTAINER_MEMORY_LIMITS.map((m) => Type.Literal(m)))),
    network_policy: Type.Optional(Type.Object({ type: Type.Union([Type.Literal('disabled'), Type.Literal('allowlist')]) }, { additionalProperties: true })),
    skills: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);
export type ContainerCreateRequest = Static<typeof ContainerCreateSchema>;

/** A container file made from a file already uploaded to the provider's Files API (the JSON form of the call). */
export const ContainerFileRefSchema = Type.Object(
  { provider: Type.Optional(Type.String({ minLength: 1 })), file_id: Type.String({ minLength: 1 }) },
  { additionalProperties: true },
);
export type ContainerFileRef = Static<typeof ContainerFileRefSchema>;
