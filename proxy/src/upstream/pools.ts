// One keep-alive connection pool per upstream origin, shared across config snapshots so a reload
// does not drop warm connections.
import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';
import { guardedLookup } from './egress.ts';

/**
 * undici's Pool by itself: the package's index also loads fetch, WebSocket, the HTTP caches, the
 * proxy agents and the mock agents, none of which the provider calls use (about 12 MB more
 * resident at start). An MCP client or a webhook, which do use them, loads the index when one is
 * configured. Should a later undici move these files, the index is loaded as before.
 */
function poolClass(): typeof UndiciPool {
  const load = createRequire(import.meta.url);
  try {
    const pool = load('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
    // What undici's index does for every dispatcher: request(), stream() and the rest on the prototype.
    Object.assign((load('undici/lib/dispatcher/dispatcher.js') as { prototype: object }).prototype, load('undici/lib/api/index.js'));
    return pool;
  } catch {
    return (load('undici') as typeof import('undici')).Pool;
  }
}
const Pool = poolClass();
type Pool = UndiciPool;

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
