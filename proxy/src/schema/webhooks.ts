// Webhook endpoints for async jobs (spec: "Webhook endpoint"), the config.json `webhooks[]` items and
// the global `client.webhook_config`. The single source of truth for this resource: ajv validates
// config and /api bodies with it, `Static` gives the types, and the Webhook CRD is generated from it.
import { Type, type Static } from '@sinclair/typebox';
import { ENV_REF_SOURCE, VAULT_REF_SOURCE } from './env-ref.ts';

export const WEBHOOK_EVENTS = ['async_job.completed', 'async_job.failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Headers every delivery sets itself (signature scheme and HTTP framing): `headers` may not override them. */
export const RESERVED_WEBHOOK_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'content-length', 'host'] as const;

/**
 * Hop-by-hop and framing headers: they describe one connection, not the delivery, and a value set
 * here could desynchronise the receiver's (or a proxy's) parsing of the request.
 */
export const HOP_BY_HOP_HEADERS = ['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length'] as const;

export function isHopByHopHeader(lower: string): boolean {
  return (HOP_BY_HOP_HEADERS as readonly string[]).includes(lower) || lower.startsWith('proxy-');
}

/** A signing secret in the Standard Webhooks format, or a reference (`env.VAR`, `vault.<path>#<field>`) to one. */
export const WEBHOOK_SECRET_PATTERN = `^(whsec_[A-Za-z0-9+/]+={0,2}|${ENV_REF_SOURCE}|${VAULT_REF_SOURCE})$`;

/** Defaults of the optional fields (spec: "Webhook endpoint" and "Limits"). */
export const WEBHOOK_DEFAULTS = {
  include_response: false,
  allow_private_network: false,
  disabled: false,
  max_retries: 4,
  retry_backoff_initial_seconds: 30,
  retry_backoff_max_seconds: 1800,
  attempt_timeout_seconds: 10,
  max_response_payload_kbs: 256,
  max_concurrent_deliveries: 10,
} as const;

const WebhookEventSchema = Type.Union(
  WEBHOOK_EVENTS.map((e) => Type.Literal(e)),
  { description: 'async_job.completed or async_job.failed.' },
);

export const WebhookEndpointSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, description: 'Unique; the reconcile key in config.json and the value of the x-bf-async-webhook submit header.' }),
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'Receiver URL; https unless allow_private_network is true.' }),
    events: Type.Array(WebhookEventSchema, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true, description: 'The events delivered to this endpoint.' }),
    secret: Type.Optional(
      Type.String({ maxLength: 512, pattern: WEBHOOK_SECRET_PATTERN, description: 'whsec_<base64> signing secret (env.VAR recommended); generated when omitted.' }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: 8192 }), {
        maxProperties: 64,
        description: 'Sent on every delivery; values accept env.VAR. Reserved delivery headers cannot be overridden.',
      }),
    ),
    include_response: Type.Optional(Type.Boolean({ description: 'Inline the job response or error in payloads (default false).' })),
    allow_private_network: Type.Optional(Type.Boolean({ description: 'Allow private-network receivers and plain http (default false).' })),
    disabled: Type.Optional(Type.Boolean({ description: 'Registered without delivering (default false).' })),
    max_retries: Type.Optional(Type.Integer({ minimum: 0, description: 'Default 4.' })),
    retry_backoff_initial_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 30; each further retry doubles the delay.' })),
    retry_backoff_max_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 1800.' })),
    attempt_timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'End-to-end bound per attempt (default 10).' })),
    max_response_payload_kbs: Type.Optional(Type.Integer({ minimum: 0, description: 'Largest response or error inlined in a payload (default 256).' })),
    max_concurrent_deliveries: Type.Optional(Type.Integer({ minimum: 1, description: 'Per node (default 10).' })),
  },
  { additionalProperties: false },
);

/** Create and update bodies of /api/webhooks: the secret is never accepted there (generated, or rotated). */
export const WebhookApiBodySchema = Type.Omit(WebhookEndpointSchema, ['secret'], { additionalProperties: false });

/** config.json `webhooks`. */
export const WebhooksSectionSchema = Type.Array(WebhookEndpointSchema);

/** Days of delivery history kept when `client.webhook_config` does not say. */
export const DEFAULT_HISTORY_RETENTION_DAYS = 30;

/** config.json `client.webhook_config`. */
export const WebhookGlobalConfigSchema = Type.Object(
  {
    delivery_history_retention_days: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;
export type WebhookApiBody = Static<typeof WebhookApiBodySchema>;
export type WebhookGlobalConfig = Static<typeof WebhookGlobalConfigSchema>;

/** Delivery settings of an endpoint with the defaults filled in. */
export type WebhookSettings = Required<Omit<WebhookEndpoint, 'secret' | 'headers'>> & Pick<WebhookEndpoint, 'secret' | 'headers'>;

export function withDefaults(e: WebhookEndpoint): WebhookSettings {
  return { ...WEBHOOK_DEFAULTS, ...e };
}
