// Where outbound calls may go: provider requests first, webhook receivers (stricter) at the end.
// Provider requests: private ranges stay allowed (self-hosted models live there), but
// link-local addresses and the cloud metadata services are refused: a provider URL pointing there
// would hand the instance's cloud credentials to whoever can edit the configuration. A provider
// opts out with `network_config.allow_link_local: true`. Checked twice: on the configured URL
// (config.json, /api, environment) and on every address a host name resolves to at connect time.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';

/** Names the metadata services answer on, whatever they resolve to from here. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** Metadata services outside link-local space (Alibaba Cloud; AWS IMDS over IPv6). */
const METADATA_ADDRESSES = new Set(['100.100.100.200', 'fd00:ec2::254']);

function ipv4Octets(ip: string): number[] | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  const octets = parts.map(Number);
  return octets.every((o) => Number.isInteger(o) && o >= 0 && o <= 255) ? octets : undefined;
}

/** Full 8-group form of an IPv6 address, lowercase, for prefix checks. */
function expandIpv6(ip: string): string[] | undefined {
  const clean = ip.replace(/^\[|\]$/g, '').split('%')[0].toLowerCase();
  if (isIP(clean) !== 6) return undefined;
  const [head, tail] = clean.includes('::') ? clean.split('::') : [clean, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  // A trailing dotted IPv4 part counts as two groups.
  const groups = (list: string[]) =>
    list.flatMap((g) => {
      const o = g.includes('.') ? ipv4Octets(g) : undefined;
      return o ? [((o[0] << 8) | o[1]).toString(16), ((o[2] << 8) | o[3]).toString(16)] : [g];
    });
  const hg = groups(h);
  const tg = groups(t);
  const fill = tail === undefined ? [] : Array(8 - hg.length - tg.length).fill('0');
  return [...hg, ...fill, ...tg].map((g) => g.padStart(4, '0'));
}

const v4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 addresses an IPv6 address leads to: traffic to these forms is translated or tunnelled to
 * the IPv4 address inside, so it is what a check must look at. IPv4-mapped `::ffff:a.b.c.d` and
 * IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and the
 * local-use `64:ff9b:1::/48` (every RFC 6052 layout a /48 or longer prefix may use), 6to4
 * `2002:aabb:ccdd::/16`, and Teredo `2001:0::/32` (its server, and its client stored inverted).
 * Empty for any other address.
 */
export function embeddedIpv4(ip: string): string[] {
  const groups = expandIpv6(ip);
  if (!groups) return [];
  const g = groups.map((x) => parseInt(x, 16));
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d and ::ffff:0:a.b.c.d
  if (zeros(0, 5) && g[5] === 0xffff) return [v4Of(g[6], g[7])];
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [v4Of(g[6], g[7])];
  // ::a.b.c.d, but not :: (unspecified) or ::1 (loopback), which are IPv6's own.
  if (zeros(0, 6)) return g[6] === 0 && g[7] <= 1 ? [] : [v4Of(g[6], g[7])];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [v4Of(g[6], g[7])];
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) {
    // The translator's prefix length is network configuration, not in the address: every layout is
    // read. Bits 64-71 are the reserved "u" octet, skipped by the layouts that cross it. A 0.0.0.0/8
    // reading of a shorter layout is the zero padding of another one, not a target.
    const shorter = [
      v4Of(g[3], ((g[4] & 0xff) << 8) | (g[5] >> 8)), // /48
      v4Of(((g[3] & 0xff) << 8) | (g[4] & 0xff), g[5]), // /56
      v4Of(((g[4] & 0xff) << 8) | (g[5] >> 8), ((g[5] & 0xff) << 8) | (g[6] >> 8)), // /64
    ].filter((v4) => !v4.startsWith('0.'));
    return [...shorter, v4Of(g[6], g[7])]; // and /96
  }
  if (g[0] === 0x2002) return [v4Of(g[1], g[2])];
  if (g[0] === 0x2001 && g[1] === 0) return [v4Of(g[2], g[3]), v4Of(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return [];
}

/**
 * The first reason `check` gives for an address: for an IPv4 address itself, for an IPv6 address
 * each IPv4 address it leads to (embeddedIpv4), named as the IPv6 form that carried it.
 */
export function viaEmbeddedIpv4(ip: string, check: (v4: string) => string | undefined): string | undefined {
  const bare = ip.replace(/^\[|\]$/g, '').split('%')[0].toLowerCase();
  if (isIP(bare) === 4) return check(bare);
  for (const v4 of embeddedIpv4(bare)) {
    const why = check(v4);
    if (why) return `${bare} leads to ${v4}: ${why}`;
  }
  return undefined;
}

function blockedIpv4(v4: string): string | undefined {
  const o = ipv4Octets(v4);
  if (o && o[0] === 169 && o[1] === 254) return `${v4} is a link-local address (169.254.0.0/16, where cloud metadata services answer)`;
  if (METADATA_ADDRESSES.has(v4)) return `${v4} is a cloud metadata service address`;
  return undefined;
}

/** Why an IP address is not a provider target, or undefined when it may be. */
export function blockedAddress(ip: string): string | undefined {
  const bare = ip.replace(/^\[|\]$/g, '');
  const viaV4 = viaEmbeddedIpv4(bare, blockedIpv4);
  if (viaV4 || isIP(bare) === 4) return viaV4;
  const groups = expandIpv6(bare);
  if (!groups) return undefined;
  const first = parseInt(groups[0], 16);
  if ((first & 0xffc0) === 0xfe80) return `${bare} is a link-local address (fe80::/10)`;
  if (groups.join(':') === 'fd00:0ec2:0000:0000:0000:0000:0000:0254') return `${bare} is a cloud metadata service address`;
  return undefined;
}

/** Why a URL's host is not a provider target, or undefined when it may be (names are checked again when resolved). */
export function blockedHost(hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(/\.$/, '').replace(/^\[|\]$/g, '');
  if (METADATA_HOSTS.has(host)) return `${host} is a cloud metadata service`;
  return isIP(host) ? blockedAddress(host) : undefined;
}

/** The error a refused connection fails with (the pipeline answers it as an upstream error). */
export class BlockedEgressError extends Error {
  readonly code = 'EGRESS_BLOCKED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that resolves as usual, then refuses link-local and metadata
 * addresses: a host name that resolves there (or is re-pointed there later) is stopped at connect
 * time. `allowLinkLocal` skips the check for providers that opted out.
 */
export function guardedLookup(allowLinkLocal: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      if (!allowLinkLocal) {
        const refused = list.map((a) => blockedAddress(a.address)).find((r) => r !== undefined);
        if (refused) return callback(new BlockedEgressError(`refusing to connect to ${hostname}: ${refused} (set network_config.allow_link_local to allow it)`), []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** Query parameters that carry credentials (`?token=`, `?api_key=`, `?sig=`, ...): their values are masked. */
const SECRET_PARAM = /token|secret|passw|pwd|api[-_]?key|^key$|^auth|signature|^sig$|credential|session|jwt/i;

/**
 * Credentials in a URL masked: `https://user:pass@host/?token=abc&q=1` → `https://user:***@host/?token=***&q=1`
 * (userinfo, and the values of credential-named query parameters); other strings unchanged.
 */
export function maskUrlCredentials(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  let out = value;
  if (out.includes('@')) {
    out = out.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i, (_m, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return colon < 0 ? `${scheme}***@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
    });
  }
  const q = out.indexOf('?');
  if (q < 0) return out;
  const hash = out.indexOf('#', q);
  const query = out.slice(q + 1, hash < 0 ? undefined : hash);
  const masked = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq <= 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // An undecodable name is judged as written.
      }
      return SECRET_PARAM.test(name) && pair.length > eq + 1 ? `${pair.slice(0, eq)}=***` : pair;
    })
    .join('&');
  return out.slice(0, q + 1) + masked + (hash < 0 ? '' : out.slice(hash));
}

/** The secret parts of a URL (password, username, credential query values), to scrub from messages. */
export function urlSecrets(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [];
  }
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const out = [url.password, url.username, decode(url.password), decode(url.username)];
  for (const [k, v] of url.searchParams) if (SECRET_PARAM.test(k)) out.push(v, encodeURIComponent(v));
  return [...new Set(out.filter((s) => s.length >= 4))];
}

// Webhook receivers: where deliveries may go. Stricter than provider egress (above): a receiver is
// someone else's public server, so loopback, private, shared (CGNAT), unspecified and multicast
// addresses are refused too unless the endpoint sets `allow_private_network`. Link-local and cloud
// metadata addresses are refused always (above). Checked on the URL when configured and
// again on every address a name resolves to at connect time, so a DNS answer that changes in between
// (rebinding) is caught where it matters.

function privateIpv4(bare: string): string | undefined {
  const o = ipv4Octets(bare);
  if (!o) return undefined;
  if (o[0] === 127) return `${bare} is a loopback address`;
  if (o[0] === 10 || (o[0] === 172 && o[1] >= 16 && o[1] <= 31) || (o[0] === 192 && o[1] === 168)) return `${bare} is a private address`;
  if (o[0] === 100 && o[1] >= 64 && o[1] <= 127) return `${bare} is a shared (CGNAT) address`;
  if (o[0] === 0) return `${bare} is an unspecified address`;
  if (o[0] >= 224) return `${bare} is a multicast or reserved address`;
  return undefined;
}

/**
 * Why an address is on a private or special network (not a public receiver), else undefined. An
 * IPv6 form that leads to an IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible) is judged by it.
 */
export function privateAddress(ip: string): string | undefined {
  const bare = ip.replace(/^\[|\]$/g, '').split('%')[0].toLowerCase();
  if (isIP(bare) === 4) return privateIpv4(bare);
  if (isIP(bare) === 6) {
    if (bare === '::1' || bare === '0:0:0:0:0:0:0:1') return `${bare} is a loopback address`;
    if (bare === '::' || /^0(:0){7}$/.test(bare)) return `${bare} is an unspecified address`;
    const embedded = viaEmbeddedIpv4(bare, privateIpv4);
    if (embedded) return embedded;
    if (/^::ffff:/.test(bare)) return `${bare} is an IPv4-mapped address`;
    const first = parseInt(bare.split(':')[0] || '0', 16);
    if ((first & 0xfe00) === 0xfc00) return `${bare} is a unique-local (private) address`;
    if ((first & 0xff00) === 0xff00) return `${bare} is a multicast address`;
  }
  return undefined;
}

/** Why a receiver address is refused, else undefined. */
export function refusedReceiverAddress(ip: string, allowPrivate: boolean): string | undefined {
  return blockedAddress(ip) ?? (allowPrivate ? undefined : privateAddress(ip));
}

/** Why a receiver host (as written in the URL) is refused before any lookup, else undefined. */
export function refusedReceiverHost(hostname: string, allowPrivate: boolean): string | undefined {
  const host = hostname.toLowerCase().replace(/\.$/, '').replace(/^\[|\]$/g, '');
  const blocked = blockedHost(host);
  if (blocked) return blocked;
  if (allowPrivate) return undefined;
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  return isIP(host) ? privateAddress(host) : undefined;
}

/** Problems with a receiver URL (scheme and literal host), else undefined. */
export function receiverUrlProblem(url: string, allowPrivate: boolean): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.protocol !== 'https:' && !(allowPrivate && u.protocol === 'http:')) {
    return allowPrivate ? 'must be an http(s) URL' : 'must be an https URL (plain http needs allow_private_network: true)';
  }
  if (u.username || u.password) return 'must not carry credentials (use headers)';
  const refused = refusedReceiverHost(u.hostname, allowPrivate);
  return refused ? `refused receiver: ${refused}${allowPrivate ? '' : ' (set allow_private_network to allow private receivers)'}` : undefined;
}

/** A `lookup` for net/tls.connect that refuses receiver addresses at connect time. */
export function receiverLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const refused = list.map((a) => refusedReceiverAddress(a.address, allowPrivate)).find((r) => r !== undefined);
      if (refused) return callback(new BlockedEgressError(`refusing to connect to ${hostname}: ${refused}`), []);
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
