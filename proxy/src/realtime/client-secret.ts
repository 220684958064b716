// Ephemeral client secrets of the gateway's own, for browsers: `ek_bf_<payload>.<mac>`, the payload
// (base64url JSON) naming the virtual key, the model, the session settings and the expiry, the MAC
// an HMAC-SHA256 under a key derived from the virtual key's own secret value. So every replica
// verifies a secret without a shared store, a secret is void the moment its virtual key is rotated
// or deleted, and a secret carries no provider key, nor the virtual key itself (only its id).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Type, type Static } from '@sinclair/typebox';
import type { GovernanceRuntime, VirtualKeyRuntime } from '../config/governance-runtime.ts';
import { GatewayError } from '../unified/errors.ts';

export const SECRET_PREFIX = 'ek_bf_';
export const DEFAULT_TTL_SECONDS = 600;
/** The settings a secret carries at most (they travel in every handshake that presents it). */
const MAX_SETTINGS_BYTES = 8 * 1024;

/** `POST /v1/realtime/client_secrets`, OpenAI's shape (`session.model` names the gateway's `provider/model`). */
export const ClientSecretRequestSchema = Type.Object(
  {
    expires_after: Type.Optional(
      Type.Object(
        {
          anchor: Type.Optional(Type.Literal('created_at')),
          seconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 7200 })),
        },
        { additionalProperties: false },
      ),
    ),
    session: Type.Object(
      {
        type: Type.Optional(Type.Literal('realtime')),
        model: Type.String({ minLength: 1, maxLength: 256 }),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: false },
);
export type ClientSecretRequest = Static<typeof ClientSecretRequestSchema>;

/** What a verified secret grants. */
export interface SecretGrant {
  vk: VirtualKeyRuntime;
  model: string;
  /** Session settings applied (session.update) when a session opens with the secret. */
  session: Record<string, unknown>;
  expiresAt: number;
}

interface Payload {
  /** Virtual key id. */
  k: string;
  m: string;
  s: Record<string, unknown>;
  /** Expiry, ms since the epoch. */
  e: number;
  n: string;
}

function macKey(vk: VirtualKeyRuntime): Buffer {
  return createHmac('sha256', 'skybridge realtime client secret').update(vk.record.value).digest();
}

function mac(vk: VirtualKeyRuntime, payload: string): Buffer {
  return createHmac('sha256', macKey(vk)).update(payload).digest();
}

/** Mints a secret for `vk`; the session settings are kept apart from the model and type. */
export function mintSecret(vk: VirtualKeyRuntime, req: ClientSecretRequest, now = Date.now()): { value: string; expiresAt: number; session: Record<string, unknown> } {
  const { model, type: _type, ...settings } = req.session;
  if (Buffer.byteLength(JSON.stringify(settings)) > MAX_SETTINGS_BYTES) throw new GatewayError(400, `session settings are over ${MAX_SETTINGS_BYTES} bytes: a client secret carries them in every handshake`, { param: 'session', code: 'invalid_field' });
  const expiresAt = now + (req.expires_after?.seconds ?? DEFAULT_TTL_SECONDS) * 1000;
  const payload: Payload = { k: vk.record.id, m: model, s: settings, e: expiresAt, n: randomBytes(9).toString('base64url') };
  const text = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return { value: `${SECRET_PREFIX}${text}.${mac(vk, text).toString('base64url')}`, expiresAt, session: settings };
}

/** The runtime map is keyed by the key's digest; a secret names the key by id. */
function keyById(rt: GovernanceRuntime, id: string): VirtualKeyRuntime | undefined {
  for (const vk of rt.virtualKeys.values()) if (vk.record.id === id) return vk;
  return undefined;
}

const refused = (message: string) => new GatewayError(401, message, { type: 'authentication_error', code: 'invalid_client_secret' });

/** The grant of a presented secret; 401 when it is malformed, forged, expired or its key is gone. */
export function verifySecret(rt: GovernanceRuntime, token: string, now = Date.now()): SecretGrant {
  const body = token.slice(SECRET_PREFIX.length);
  const dot = body.indexOf('.');
  if (!token.startsWith(SECRET_PREFIX) || dot < 0) throw refused('the client secret is malformed');
  const text = body.slice(0, dot);
  let payload: Payload;
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Payload;
  } catch {
    throw refused('the client secret is malformed');
  }
  if (typeof payload?.k !== 'string' || typeof payload.m !== 'string' || typeof payload.e !== 'number') throw refused('the client secret is malformed');
  const vk = keyById(rt, payload.k);
  const got = Buffer.from(body.slice(dot + 1), 'base64url');
  const want = vk ? mac(vk, text) : undefined;
  // One answer for a forged secret and for one whose key was rotated or deleted: both are void.
  if (!vk || !want || got.length !== want.length || !timingSafeEqual(got, want)) throw refused('the client secret is not valid (forged, or its virtual key was rotated or deleted)');
  if (payload.e <= now) throw refused('the client secret has expired: mint a new one with POST /v1/realtime/client_secrets');
  if (vk.record.is_active === false) throw refused(`virtual key '${vk.record.name}' is inactive`);
  return { vk, model: payload.m, session: typeof payload.s === 'object' && payload.s !== null ? payload.s : {}, expiresAt: payload.e };
}

/**
 * A client secret presented as the Bearer token: its grant (401 when it is void), with the header
 * removed from `headers`, since it is no virtual key. Undefined when the token is not a secret.
 */
export function takeSecret(rt: GovernanceRuntime, headers: IncomingHttpHeaders): SecretGrant | undefined {
  const bearer = /^bearer (.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  if (!bearer?.startsWith(SECRET_PREFIX)) return undefined;
  const grant = verifySecret(rt, bearer);
  delete headers.authorization;
  return grant;
}
