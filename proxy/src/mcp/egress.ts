// Where MCP http/sse connections may go. MCP servers usually live on loopback or a private network
// (a sidecar, a service in the cluster), so loopback, private, CGNAT and unique-local addresses are
// allowed, as for provider base URLs (upstream/egress.ts). Refused always: link-local addresses and the
// cloud metadata services (a client URL added through /api must not read the instance's cloud
// credentials), and unspecified and multicast addresses (never an MCP server). Checked on every
// request's URL (an IP literal is never looked up) and on every address a name resolves to when a
// connection opens, so a DNS answer that changes after the check (rebinding) and every redirect hop
// are checked too.
import { capResponse } from './answer-cap.ts';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { Agent, Dispatcher } from 'undici';
import { lazy } from '../lazy.ts';
import { BlockedEgressError, blockedAddress, blockedHost, viaEmbeddedIpv4 } from '../upstream/egress.ts';

/** undici's index (Agent, fetch): loaded when an MCP client connects, not with every gateway. */
const undici = lazy<typeof import('undici')>('undici');

const REDIRECTS = [301, 302, 303, 307, 308];
const MAX_REDIRECTS = 5;
/** Headers that carry credentials: dropped when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

function unusableIpv4(bare: string): string | undefined {
  const first = Number(bare.split('.')[0]);
  if (first === 0) return `${bare} is an unspecified address`;
  if (first >= 224) return `${bare} is a multicast or reserved address`;
  return undefined;
}

/** Unspecified (0.0.0.0/8, ::) and multicast or reserved (224.0.0.0/3, ff00::/8) addresses, also behind an IPv6 form that leads to IPv4. */
function unusableAddress(ip: string): string | undefined {
  const bare = ip.replace(/^\[|\]$/g, '').split('%')[0].toLowerCase();
  if (isIP(bare) === 4) return unusableIpv4(bare);
  if (isIP(bare) !== 6) return undefined;
  if (bare.replace(/[:0]/g, '') === '') return `${bare} is an unspecified address`;
  if (bare.startsWith('ff')) return `${bare} is a multicast address`;
  return viaEmbeddedIpv4(bare, unusableIpv4);
}

/** Why an MCP server address is refused, else undefined. */
export function refusedMcpAddress(ip: string): string | undefined {
  return blockedAddress(ip) ?? unusableAddress(ip);
}

/** Why an MCP server URL is refused before any lookup (scheme, credentials, literal host), else undefined. */
export function mcpUrlProblem(url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} is not allowed (http or https)`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return blockedHost(host) ?? (isIP(host) ? unusableAddress(host) : undefined);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls.connect that refuses MCP server addresses at connect time. */
export function mcpLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const refused = list.map((a) => refusedMcpAddress(a.address)).find((r) => r !== undefined);
    if (refused) return callback(new BlockedEgressError(`refusing to connect to ${hostname}: ${refused}`), []);
    if (options.all) return callback(null, list);
    const first = list[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}

/**
 * The connections of one MCP client: its own pool, closed with the client. No body timeout: SSE
 * streams stay open while idle (the SDK's request timeouts bound each call).
 */
export function mcpDispatcher(): Agent {
  return new (undici().Agent)({ connect: { lookup: mcpLookup }, keepAliveTimeout: 10_000, bodyTimeout: 0 });
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The fetch given to the SDK transports: every request URL is checked, connections go through the
 * checking lookup, and redirects (when the caller asks fetch to follow them) are followed here one
 * hop at a time so each target is checked; credentials are not carried to another origin. With
 * `maxMessageBytes`, every message of an answer is bounded while it is read (answer-cap.ts).
 */
export function checkedFetch(dispatcher: Dispatcher, secretHeaders: readonly string[] = [], maxMessageBytes?: () => number): FetchLike {
  const dropOnLeave = new Set([...CREDENTIAL_HEADERS, ...secretHeaders.map((h) => h.toLowerCase())]);
  return async (input, init = {}) => {
    let url = new URL(String(input));
    let reqInit: RequestInit = init;
    const follow = (init.redirect ?? 'follow') === 'follow';
    for (let hop = 0; ; hop++) {
      const refused = mcpUrlProblem(url);
      if (refused) throw new BlockedEgressError(`refusing to connect to ${url.host}: ${refused}`);
      let res: Response;
      try {
        res = (await undici().fetch(url, { ...(reqInit as object), redirect: follow ? 'manual' : reqInit.redirect, dispatcher } as Parameters<typeof import('undici').fetch>[1])) as unknown as Response;
      } catch (err) {
        // fetch hides the connect error as "fetch failed"; the refusal is the reason worth showing.
        const cause = (err as Error & { cause?: unknown }).cause;
        throw cause instanceof BlockedEgressError ? cause : err;
      }
      const location = follow && REDIRECTS.includes(res.status) ? res.headers.get('location') : null;
      if (!location) return maxMessageBytes ? capResponse(res, maxMessageBytes(), reqInit.body) : res;
      if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects (more than ${MAX_REDIRECTS}) from ${String(input)}`);
      await res.body?.cancel().catch(() => undefined);
      const next = new URL(location, url);
      const method = (reqInit.method ?? 'GET').toUpperCase();
      const toGet = res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST');
      const headers = new Headers(reqInit.headers);
      if (next.origin !== url.origin) for (const h of dropOnLeave) headers.delete(h);
      reqInit = { ...reqInit, headers, ...(toGet && { method: method === 'HEAD' ? 'HEAD' : 'GET', body: undefined }) };
      url = next;
    }
  };
}
