// What a passthrough call may carry upstream and back: the path exactly as the client wrote it (never
// decoded, so the provider sees the bytes the client sent) but never one that could climb above the
// provider's base path, and only headers that describe the request itself: hop-by-hop headers, the
// client's credentials and its identity (cookies, forwarding chains) stay at the gateway.
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../unified/errors.ts';
import { REQUEST_ID_HEADER, UPSTREAM_REQUEST_ID_HEADER } from '../request-id.ts';

/** `/<provider>_passthrough<rest>` with rest raw, query excluded. */
const RAW_PATH = /^\/[a-z0-9][a-z0-9-]*_passthrough(\/[^?#]*)?/;

/** Hop-by-hop (RFC 9110 7.6.1): about one connection, not the message. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-connection', 'http2-settings']);

/** Request framing undici redoes itself (the body is streamed), and the gateway's own host name. */
const REFRAMED = new Set(['content-length', 'host', 'expect']);

/** The client's own credentials for the gateway and who it is: never the provider's business. */
const CLIENT_ONLY = new Set([
  'authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'x-bf-vk',
  // A temporary AWS credential's session part: the provider's signature carries its own (or none).
  'x-amz-security-token',
  'cookie', 'forwarded', 'x-real-ip', 'via', 'x-client-ip', 'true-client-ip', 'cf-connecting-ip',
]);

/** Answer headers that belong to the gateway's connection with the provider, or its session there. */
const ANSWER_DROP = new Set([...HOP_BY_HOP, 'set-cookie', 'set-cookie2', 'proxy-authenticate', 'alt-svc']);

/** Decoding rounds checked: a provider (or a proxy before it) may decode more than once. */
const DECODE_ROUNDS = 3;

const badPath = (why: string) => new GatewayError(400, `invalid passthrough path: ${why}`, { type: 'invalid_request_error', code: 'invalid_path', param: null });

/**
 * The path after `/<provider>_passthrough`, as received (percent-escapes kept), checked: refused
 * when it, decoded once or a few times over, has a `.` or `..` segment (also spelled with `%2e`, or
 * split by `%2f` or a backslash, or followed by `;params`, which servlet-style servers drop before
 * resolving: `/..;/admin` climbs there) or a NUL, so no reading of it leaves the provider's base path.
 */
export function passthroughPath(rawUrl: string): string {
  const m = RAW_PATH.exec(rawUrl);
  const rest = m?.[1] ?? '';
  if (!rest) throw badPath("expected '/<provider>_passthrough/<path>'");
  let text = rest;
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    for (const segment of text.split(/[/\\]/)) {
      const name = segment.split(';')[0];
      if (name === '.' || name === '..') throw badPath("'.' and '..' segments (also with ';params', as in '..;/') are not allowed (the path must stay below the provider's base URL)");
    }
    if (text.includes('\0')) throw badPath('NUL bytes are not allowed');
    if (!text.includes('%')) break;
    let next: string;
    try {
      next = decodeURIComponent(text);
    } catch {
      throw badPath("it holds a '%' that is not a valid percent-escape");
    }
    if (next === text) break;
    text = next;
  }
  return rest;
}

/** The query string as received, `?`-prefixed, or ''. */
export function rawQuery(rawUrl: string): string {
  const q = rawUrl.indexOf('?');
  return q < 0 ? '' : rawUrl.slice(q);
}

/** Names a `Connection` header lists: hop-by-hop for this one message. */
function connectionListed(value: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const v of Array.isArray(value) ? value : value ? [value] : []) for (const n of v.split(',')) if (n.trim()) out.add(n.trim().toLowerCase());
  return out;
}

function dropOnRequest(name: string, listed: ReadonlySet<string>): boolean {
  return name.startsWith(':') || HOP_BY_HOP.has(name) || REFRAMED.has(name) || CLIENT_ONLY.has(name) || listed.has(name) || name.startsWith('proxy-') || name.startsWith('x-forwarded-');
}

/** The client's headers that go upstream (before the provider's auth and extra headers are added). */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const listed = connectionListed(headers.connection);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && !dropOnRequest(name, listed)) out[name] = value;
  }
  return out;
}

/** The provider's answer headers that go to the client. */
export function relayedAnswerHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const listed = connectionListed(headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !ANSWER_DROP.has(name) && !listed.has(name) && !name.startsWith('proxy-')) out[name === REQUEST_ID_HEADER ? UPSTREAM_REQUEST_ID_HEADER : name] = value;
  }
  return out;
}
