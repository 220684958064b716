// A pool's model servers from its EndpointSlices: pure. Each ready endpoint's address, on each of
// the pool's target ports that its slice serves (a slice that lists no ports serves them all).
import { isIP } from 'node:net';
import { blockedAddress } from '../upstream/egress.ts';

/** The fields of a discovery.k8s.io/v1 EndpointSlice read here. */
export interface SliceLike {
  addressType?: string;
  endpoints?: readonly { addresses?: readonly string[]; conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null } | null }[] | null;
  ports?: readonly { port?: number | null }[] | null;
}

export interface ServerAddress {
  /** `http://10.0.3.7:8000`, `http://[fd00::7]:8000` */
  origin: string;
  address: string;
  port: number;
}

export interface PoolServers {
  servers: ServerAddress[];
  /** Addresses left out because the egress rule refuses them (link-local, cloud metadata), each with why. */
  refused: string[];
}

export function poolServers(targetPorts: readonly number[], slices: readonly SliceLike[]): PoolServers {
  const byOrigin = new Map<string, ServerAddress>();
  const refused = new Set<string>();
  for (const slice of slices) {
    // FQDN slices name hosts, not pods: the pool's servers are pods.
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const listed = (slice.ports ?? []).map((p) => p.port).filter((p): p is number => typeof p === 'number');
    const ports = listed.length === 0 ? targetPorts : targetPorts.filter((p) => listed.includes(p));
    for (const ep of slice.endpoints ?? []) {
      // Ready unset means ready (the API's rule); a terminating server takes no new requests.
      if (ep.conditions?.ready === false || ep.conditions?.terminating === true) continue;
      // The addresses of one endpoint are the same server: the first is used.
      const address = ep.addresses?.[0];
      if (!address || !isIP(address)) continue;
      const why = blockedAddress(address);
      if (why) {
        refused.add(why);
        continue;
      }
      const host = isIP(address) === 6 ? `[${address}]` : address;
      for (const port of ports) {
        const origin = `http://${host}:${port}`;
        byOrigin.set(origin, { origin, address, port });
      }
    }
  }
  const servers = [...byOrigin.values()].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0));
  return { servers, refused: [...refused] };
}
