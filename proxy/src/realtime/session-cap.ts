// Open WebSocket sessions per virtual key (anonymous callers share one count), realtime and
// Responses sockets alike: `websocket.max_connections_per_user` caps them on each replica.
import type { VirtualKeyRuntime } from '../config/governance-runtime.ts';
import { GatewayError } from '../unified/errors.ts';

export const DEFAULT_MAX_SESSIONS_PER_KEY = 100;

export class SessionCap {
  readonly #open = new Map<string, number>();

  /** Takes a place for `vk`'s session, or throws the 429 naming the cap; answers the release. */
  acquire(vk: VirtualKeyRuntime | undefined, cap: number): () => void {
    const who = vk?.record.id ?? '';
    const open = this.#open.get(who) ?? 0;
    if (open >= cap) {
      const name = vk ? `virtual key '${vk.record.name}'` : 'anonymous callers';
      throw new GatewayError(429, `${name} already has ${open} WebSocket sessions open, the most websocket.max_connections_per_user allows (${cap}); close one first`, { type: 'rate_limit_error', code: 'too_many_sessions', retryAfter: 1 });
    }
    this.#open.set(who, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(who) ?? 1) - 1;
      if (left > 0) this.#open.set(who, left);
      else this.#open.delete(who);
    };
  }
}
