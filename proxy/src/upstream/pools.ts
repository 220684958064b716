// One keep-alive connection pool per upstream origin, shared across config snapshots so a reload
// does not drop warm connections.
import { Pool } from 'undici';
import { guardedLookup } from './egress.ts';

const pools = new Map<string, Pool>();

/** `allowLinkLocal`: the provider opted in to link-local and metadata addresses (checked when a name resolves). */
export function poolFor(origin: string, connections: number, allowLinkLocal = false): Pool {
  const id = `${origin}#${connections}${allowLinkLocal ? '#link-local' : ''}`;
  let pool = pools.get(id);
  if (!pool) {
    pool = new Pool(origin, {
      connect: { lookup: guardedLookup(allowLinkLocal) },
      connections,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      // Timeouts are enforced per request by the pipeline, not by the pool.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    pools.set(id, pool);
  }
  return pool;
}

export async function closePools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((p) => p.close()));
}
