// `POST /v1/realtime/client_secrets` (and under the other OpenAI prefixes): mints a short-lived
// secret of the gateway's own for a browser (realtime/client-secret.ts), in OpenAI's answer shape.
// The caller's virtual key is required: the secret is bound to it, and to the model and session
// settings asked for; it never holds a provider key nor the virtual key itself.
import { randomUUID } from 'node:crypto';
import type { Exchange } from '../http/exchange.ts';
import { parseJson, readBody, validated } from '../http/body.ts';
import { sendError, sendJson } from '../http/respond.ts';
import type { Routes } from '../http/server.ts';
import { identifyCaller } from '../governance/auth.ts';
import { GatewayError } from '../unified/errors.ts';
import { OPENAI_PREFIXES } from '../unified/operations.ts';
import { ClientSecretRequestSchema, mintSecret } from '../realtime/client-secret.ts';

/** A request for a secret is a few settings: more is refused before it is parsed. */
const MAX_BODY_BYTES = 64 * 1024;
const read = validated(ClientSecretRequestSchema);

async function mint(ex: Exchange): Promise<void> {
  try {
    const vk = identifyCaller(ex.snapshot.governance, ex.req.headers);
    if (!vk) throw new GatewayError(401, 'a virtual key is required to mint a client secret: send it in x-bf-vk or as the Bearer token', { type: 'authentication_error', code: 'invalid_virtual_key' });
    const body = read(parseJson(await readBody(ex.req, MAX_BODY_BYTES)));
    const secret = mintSecret(vk, body);
    const expiresAt = Math.floor(secret.expiresAt / 1000);
    sendJson(ex.res, 200, {
      value: secret.value,
      expires_at: expiresAt,
      session: { ...secret.session, type: 'realtime', object: 'realtime.session', id: `sess_bf_${randomUUID().replaceAll('-', '')}`, model: body.session.model, expires_at: expiresAt },
    });
  } catch (err) {
    sendError(ex.res, err, { request_type: 'realtime_client_secret' });
  }
}

export function realtimeSecretRoutes(): Routes {
  return Object.fromEntries(OPENAI_PREFIXES.map((p) => [`${p}/realtime/client_secrets`, { POST: mint }]));
}
