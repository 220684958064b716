// The provider's side of a WebRTC call's signalling: the gateway's own offer POSTed to the
// provider's `/realtime/calls` (multipart `sdp` + `session`, as OpenAI and Azure OpenAI document it)
// with the provider key the gateway holds, through the provider's connection pool (whose lookups
// the egress guard checks), and the hangup when the gateway ends the call. The request is a pure
// function of the target and its key (tested alone).
import type { Dispatcher } from 'undici';
import type { ProviderKey, ProviderRuntime } from '../providers/runtime.ts';
import { encodeMultipart } from '../upstream/form-encode.ts';
import { poolFor } from '../upstream/pools.ts';
import { GatewayError } from '../unified/errors.ts';
import { refusal } from './upstream.ts';

export interface CallRequest {
  origin: string;
  /** `/v1/realtime/calls` (OpenAI), `/openai/v1/realtime/calls` (Azure's v1 surface). */
  path: string;
  headers: Record<string, string>;
}

/** Where the provider takes WebRTC offers, and the key the gateway adds (never the client's). */
export function callRequest(provider: ProviderRuntime, key: ProviderKey | undefined): CallRequest {
  const headers: Record<string, string> = { ...provider.extraHeaders };
  if (provider.kind.format === 'azure') {
    const azure = key?.azure;
    if (key) {
      if (azure?.bearer) headers.authorization = `Bearer ${key.value}`;
      else headers['api-key'] = key.value;
    }
    return { origin: azure?.origin ?? provider.origin, path: `${azure?.basePath ?? provider.basePath}/v1/realtime/calls`, headers };
  }
  if (key) headers.authorization = `Bearer ${key.value}`;
  return { origin: provider.origin, path: `${provider.basePath}/realtime/calls`, headers };
}

/** The model name the provider's session takes: Azure's deployment for the model, else the model. */
export function providerModel(provider: ProviderRuntime, model: string, key: ProviderKey | undefined): string {
  return provider.kind.format === 'azure' ? (key?.azure?.deployments[model] ?? model) : model;
}

/** The multipart body of the offer: the SDP and the session (its model the provider's own name). */
export function callBody(offer: string, session: Record<string, unknown>): { bytes: Buffer; contentType: string } {
  return encodeMultipart([
    { name: 'sdp', value: offer },
    { name: 'session', value: JSON.stringify(session) },
  ]);
}

function poolOf(provider: ProviderRuntime, origin: string): Dispatcher {
  return origin === provider.origin ? provider.pool : poolFor(origin, provider.maxConnections, provider.allowLinkLocal);
}

/** Bytes of a provider's answer read at most (an SDP answer is a few KiB). */
const ANSWER_BYTES = 256 * 1024;

async function readText(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > limit) {
      body.destroy();
      break;
    }
  }
  return text;
}

/** The provider's call id from the answer's `Location` (`/v1/realtime/calls/<id>`). */
export function callIdOf(location: string | string[] | undefined): string | undefined {
  const value = Array.isArray(location) ? location[0] : location;
  const id = value?.split('?')[0].split('/').filter(Boolean).at(-1);
  return id && /^[A-Za-z0-9_-]{1,200}$/.test(id) ? id : undefined;
}

/** POSTs the offer; answers the provider's SDP answer and call id. A refusal keeps the provider's status and message. */
export async function postOffer(provider: ProviderRuntime, req: CallRequest, offer: string, session: Record<string, unknown>, signal: AbortSignal): Promise<{ answer: string; callId: string | undefined }> {
  const body = callBody(offer, session);
  let res: Dispatcher.ResponseData;
  try {
    res = await poolOf(provider, req.origin).request({
      method: 'POST',
      path: req.path,
      headers: { ...req.headers, 'content-type': body.contentType, accept: 'application/sdp' },
      body: body.bytes,
      signal,
    });
  } catch (err) {
    const e = err as Error & { code?: string };
    if (signal.aborted) throw new GatewayError(499, 'the client went away while the provider was being called', { type: 'client_closed' });
    const blocked = e.code === 'EGRESS_BLOCKED';
    throw new GatewayError(502, `provider '${provider.name}' WebRTC call failed: ${blocked ? e.message : (e.code ?? e.message)}`, { type: 'upstream_error', code: blocked ? 'egress_blocked' : 'upstream_connect_failed', provider: provider.name });
  }
  const text = await readText(res.body, ANSWER_BYTES);
  if (res.statusCode < 200 || res.statusCode >= 300) throw refusal(provider.name, res.statusCode, text);
  if (!text.startsWith('v=0')) throw new GatewayError(502, `provider '${provider.name}' answered the WebRTC offer with something that is not an SDP answer`, { type: 'upstream_error', code: 'upstream_invalid_response', provider: provider.name });
  return { answer: text, callId: callIdOf(res.headers.location) };
}

/** Ends the provider's call (best effort: closing the peer connection ends it too). */
export async function hangupProvider(provider: ProviderRuntime, req: CallRequest, callId: string): Promise<void> {
  try {
    const res = await poolOf(provider, req.origin).request({ method: 'POST', path: `${req.path}/${encodeURIComponent(callId)}/hangup`, headers: req.headers, signal: AbortSignal.timeout(5000) });
    await res.body.dump();
  } catch {
    // The peer connection is closed as well; a provider that does not answer the hangup has no call left.
  }
}
