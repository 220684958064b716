// Where a realtime session goes at the provider, and the connection to it. The URL and headers are
// a pure function of the target and its key (tested alone); the connection is a `ws` client whose
// host name is checked at connect time by the provider egress guard, as the HTTP pools are.
import type { IncomingMessage } from 'node:http';
import type { WebSocket as WsClient } from 'ws';
import type { ProviderKey, ProviderRuntime } from '../providers/runtime.ts';
import { guardedLookup } from '../upstream/egress.ts';
import { GatewayError } from '../unified/errors.ts';

export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  /** What the provider speaks: OpenAI's Realtime events as they are, or Gemini's Live API (translated). */
  protocol: 'openai' | 'gemini';
}

const wsScheme = (origin: string): string => origin.replace(/^http/, 'ws');

/** The provider's realtime WebSocket for `model`, with the key the gateway adds (never the client's). */
export function upstreamRequest(provider: ProviderRuntime, model: string, key: ProviderKey | undefined): UpstreamRequest {
  const headers: Record<string, string> = { ...provider.extraHeaders };
  const format = provider.kind.format;
  if (format === 'azure') {
    const azure = key?.azure;
    const origin = azure?.origin ?? provider.origin;
    const basePath = azure?.basePath ?? provider.basePath;
    // The GA realtime API lives on Azure's v1 surface: the deployment goes in `model`, no api-version.
    const deployment = azure?.deployments[model] ?? model;
    if (key) {
      if (azure?.bearer) headers.authorization = `Bearer ${key.value}`;
      else headers['api-key'] = key.value;
    }
    return { url: `${wsScheme(origin)}${basePath}/v1/realtime?model=${encodeURIComponent(deployment)}`, headers, protocol: 'openai' };
  }
  if (format === 'gemini') {
    if (key) headers['x-goog-api-key'] = key.value;
    // The Live API's one endpoint; the model is named in the `setup` message.
    const version = provider.basePath.endsWith('/v1beta') || provider.basePath.endsWith('/v1alpha') ? provider.basePath.slice(provider.basePath.lastIndexOf('/') + 1) : 'v1beta';
    const root = provider.basePath.slice(0, provider.basePath.length - version.length - 1);
    return { url: `${wsScheme(provider.origin)}${root}/ws/google.ai.generativelanguage.${version}.GenerativeService.BidiGenerateContent`, headers, protocol: 'gemini' };
  }
  if (key) headers.authorization = `Bearer ${key.value}`;
  return { url: `${wsScheme(provider.origin)}${provider.basePath}/realtime?model=${encodeURIComponent(model)}`, headers, protocol: 'openai' };
}

/** An open provider socket and the events it sent before anyone listened. */
export interface Connected {
  ws: WsClient;
  /** Stops keeping events and answers those kept; the caller listens from now on. */
  takeEarly(): Buffer[];
}

/** Bytes of a provider's refusal body read into the client's error, at most. */
const REFUSAL_BYTES = 4096;

/**
 * Opens the provider's socket. A refused handshake becomes the gateway error the client's own
 * handshake is answered with: the provider's 4xx status and message (its key never appears in
 * either), a 502 for anything else.
 */
export async function connectUpstream(provider: ProviderRuntime, req: UpstreamRequest, opts: { timeoutMs: number; maxPayload: number; signal?: AbortSignal }): Promise<Connected> {
  const { WebSocket } = await import('ws');
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(req.url, {
      headers: req.headers,
      handshakeTimeout: opts.timeoutMs,
      perMessageDeflate: false,
      maxPayload: opts.maxPayload,
      followRedirects: false,
      lookup: guardedLookup(provider.allowLinkLocal) as never,
    });
    // The provider's first events can arrive with the handshake's answer, before whoever awaits this
    // listens: they are kept until the link takes them.
    const early: Buffer[] = [];
    const keep = (data: Buffer): void => void early.push(data);
    ws.on('message', keep);
    const fail = (err: GatewayError): void => {
      ws.removeAllListeners('open');
      ws.on('error', () => undefined);
      ws.terminate();
      reject(err);
    };
    const onAbort = (): void => fail(new GatewayError(499, 'the client went away while the provider was being connected', { type: 'client_closed' }));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    ws.once('open', () => {
      opts.signal?.removeEventListener('abort', onAbort);
      ws.removeAllListeners('error');
      resolve({
        ws,
        takeEarly: () => {
          ws.off('message', keep);
          return early.splice(0);
        },
      });
    });
    ws.once('unexpected-response', (_r, res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < REFUSAL_BYTES) body += chunk;
      });
      res.once('end', () => fail(refusal(provider.name, res.statusCode ?? 502, body)));
      res.once('error', () => fail(refusal(provider.name, res.statusCode ?? 502, body)));
    });
    ws.once('error', (err: Error & { code?: string }) => {
      const blocked = err.code === 'EGRESS_BLOCKED';
      fail(new GatewayError(502, `provider '${provider.name}' realtime connection failed: ${blocked ? err.message : (err.code ?? err.message)}`, { type: 'upstream_error', code: blocked ? 'egress_blocked' : 'upstream_connect_failed', provider: provider.name }));
    });
  });
}

/** A provider's handshake refusal as the gateway's error: its message, never its headers. */
export function refusal(provider: string, status: number, body: string): GatewayError {
  let message = body.slice(0, 500);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof m === 'string') message = m;
  } catch {
    // not JSON: the text as it came
  }
  const clientFault = status >= 400 && status < 500;
  return new GatewayError(clientFault ? status : 502, `provider '${provider}' refused the realtime session (${status})${message ? `: ${message}` : ''}`, {
    type: clientFault ? 'invalid_request_error' : 'upstream_error',
    code: 'upstream_refused',
    provider,
    upstream: true,
  });
}
