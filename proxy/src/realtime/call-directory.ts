// Which replica holds each WebRTC call, so a hangup that reaches another replica still ends it.
// A call's media and events run through the process that answered its offer; a load balancer may
// send the hangup anywhere. With Redis shared by the replicas, each call has an entry there (its
// holder and key, expiring with the longest session), and a hangup for a call not held here is
// published on a channel every replica listens to: the holder ends the call and removes the entry,
// which the replica that took the hangup waits to see gone before it answers. Without Redis the
// gateway is one process and its own calls are all there is.
import { hostname } from 'node:os';
import type { RedisClientType } from 'redis';
import type { SharedRedis } from '../state/redis.ts';
import { log } from '../log.ts';

/** What became of a hangup sent to the other replicas. */
export type RemoteHangup = { kind: 'ended' } | { kind: 'unknown' } | { kind: 'unconfirmed'; holder: string };

export interface CallDirectory {
  /** Whether other replicas can be reached (a shared Redis). */
  readonly shared: boolean;
  /** A call answered here; its entry lasts `ttlMs` at most (the longest a session may run). */
  opened(id: string, vkId: string | undefined, ttlMs: number): void;
  /** The call ended here. */
  closed(id: string): void;
  /** Hangs up a call another replica holds, for the key that opened it. */
  hangupElsewhere(id: string, vkId: string | undefined): Promise<RemoteHangup>;
  /** `hangup` is called for each hangup another replica passes on; it answers whether the call was here. */
  listen(hangup: (id: string, vkId: string | undefined) => boolean): void;
  close(): Promise<void>;
}

/** One process: no other replica to ask. */
export const LOCAL_CALLS: CallDirectory = {
  shared: false,
  opened: () => undefined,
  closed: () => undefined,
  hangupElsewhere: () => Promise.resolve({ kind: 'unknown' }),
  listen: () => undefined,
  close: () => Promise.resolve(),
};

/** How long a replica that took a hangup waits for the holder to end the call. */
export const HANGUP_CONFIRM_MS = 3000;
const POLL_MS = 25;

interface Entry {
  replica: string;
  vk: string | null;
}

interface HangupMessage {
  id: string;
  vk: string | null;
}

/** This process as a holder is named in errors: the pod (POD_NAME) or host, and the pid. */
export function replicaName(env: NodeJS.ProcessEnv = process.env): string {
  return `${env.POD_NAME || hostname()}/${process.pid}`;
}

export class RedisCallDirectory implements CallDirectory {
  readonly shared = true;
  readonly #redis: SharedRedis;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #replica: string;
  #subscriber: RedisClientType | undefined;

  constructor(redis: SharedRedis, prefix: string, replica = replicaName()) {
    this.#redis = redis;
    this.#prefix = `${prefix}rtc-call:`;
    this.#channel = `${prefix}rtc-hangup`;
    this.#replica = replica;
  }

  opened(id: string, vkId: string | undefined, ttlMs: number): void {
    const entry: Entry = { replica: this.#replica, vk: vkId ?? null };
    // A call goes on without its entry (Redis away): only a hangup through another replica misses it.
    this.#redis.call(() => this.#redis.client.set(this.#prefix + id, JSON.stringify(entry), { PX: Math.max(1000, ttlMs) })).catch((err: unknown) => log.warn('could not record a WebRTC call in Redis: a hangup sent to another replica will not find it', { error: (err as Error).message }));
  }

  closed(id: string): void {
    this.#redis.call(() => this.#redis.client.del(this.#prefix + id)).catch(() => undefined);
  }

  async hangupElsewhere(id: string, vkId: string | undefined): Promise<RemoteHangup> {
    const key = this.#prefix + id;
    const raw = await this.#redis.call(() => this.#redis.client.get(key));
    if (raw === null) return { kind: 'unknown' };
    let entry: Entry;
    try {
      entry = JSON.parse(raw) as Entry;
    } catch {
      return { kind: 'unknown' };
    }
    // Another key's call is as unknown as one that never was.
    if (entry.vk !== (vkId ?? null)) return { kind: 'unknown' };
    const message: HangupMessage = { id, vk: entry.vk };
    await this.#redis.call(() => this.#redis.client.publish(this.#channel, JSON.stringify(message)));
    const deadline = performance.now() + HANGUP_CONFIRM_MS;
    while (performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      if ((await this.#redis.call(() => this.#redis.client.exists(key))) === 0) return { kind: 'ended' };
    }
    return { kind: 'unconfirmed', holder: entry.replica };
  }

  listen(hangup: (id: string, vkId: string | undefined) => boolean): void {
    const sub = this.#redis.client.duplicate() as RedisClientType;
    this.#subscriber = sub;
    // The main connection reports outages; the subscriber's own errors would repeat them.
    sub.on('error', () => undefined);
    sub
      .connect()
      .then(() =>
        sub.subscribe(this.#channel, (text: string) => {
          let m: HangupMessage;
          try {
            m = JSON.parse(text) as HangupMessage;
          } catch {
            return;
          }
          if (typeof m.id !== 'string') return;
          // The holder removes the entry at once: that is the asking replica's confirmation.
          if (hangup(m.id, m.vk ?? undefined)) this.closed(m.id);
        }),
      )
      .catch((err: unknown) => log.debug('WebRTC call directory: hangup subscription ended', { error: (err as Error).message }));
  }

  async close(): Promise<void> {
    const sub = this.#subscriber;
    this.#subscriber = undefined;
    if (!sub) return;
    if (sub.isReady) await sub.close().catch(() => sub.destroy());
    else sub.destroy();
  }
}
