// Building replies.

import type { Headers, Reply } from './types.ts';

export function json(status: number, payload: unknown, headers?: Headers): Reply {
  return { kind: 'json', status, body: JSON.stringify(payload), headers };
}

/** A reply whose body is already serialized (cached catalogs). */
export function rawJson(status: number, body: string, headers?: Headers): Reply {
  return { kind: 'json', status, body, headers };
}

export function sse(events: string[], headers?: Headers): Reply {
  return { kind: 'sse', events, headers };
}
