// Where webhook deliveries may go. Stricter than provider egress (upstream/egress.ts): a receiver is
// someone else's public server, so loopback, private, shared (CGNAT), unspecified and multicast
// addresses are refused too unless the endpoint sets `allow_private_network`. Link-local and cloud
// metadata addresses are refused always (upstream/egress.ts). Checked on the URL when configured and
// again on every address a name resolves to at connect time, so a DNS answer that changes in between
// (rebinding) is caught where it matters.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { BlockedEgressError, blockedAddress, blockedHost, viaEmbeddedIpv4 } from '../upstream/egress.ts';

function v4(ip: string): number[] | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  const o = parts.map(Number);
  return o.every((x) => Number.isInteger(x) && x >= 0 && x <= 255) ? o : undefined;
}

function privateIpv4(bare: string): string | undefined {
  const o = v4(bare);
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

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

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
