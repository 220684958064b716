// WebSocket tickets (POST /api/session/ws-ticket): a browser cannot put an Authorization header on a
// WebSocket, and a session token in a URL would end up in access logs and history. A ticket lives
// 30 s and opens one socket. It is signed like a session (api/signed-token.ts), so the replica or
// worker the socket lands on accepts it without a shared store; it is spent on that process.
import { SignedTokens, type KeySource } from './signed-token.ts';

export const TICKET_TTL_MS = 30_000;

export class TicketStore {
  readonly #tokens: SignedTokens;

  constructor(key: KeySource, ttlMs = TICKET_TTL_MS) {
    this.#tokens = new SignedTokens('ws-ticket', ttlMs, key);
  }

  get ttlMs(): number {
    return this.#tokens.ttlMs;
  }

  /** Undefined when there is no key (no admin credentials configured). */
  issue(now = Date.now()): { ticket: string; expiresAt: number } | undefined {
    const t = this.#tokens.issue(now);
    return t && { ticket: t.token, expiresAt: t.expiresAt };
  }

  /** True once for a valid, unexpired ticket; it is spent on this process. */
  consume(ticket: string, now = Date.now()): boolean {
    return this.#tokens.spend(ticket, now);
  }

  /** Tickets spent here and not yet expired (what the store holds). */
  get size(): number {
    return this.#tokens.spentCount;
  }
}
