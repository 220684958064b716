// The request id that joins a client's answer (the `x-request-id` header, an error body's
// `error.request_id`) to the gateway's access line, request log record, async job and webhook
// delivery. A client's own id is kept when it is a plain token (bounded, a safe charset: it lands in
// logs, headers and SQL parameters); anything else is replaced. Made ids are a random prefix drawn
// once per process and a counter: unique across replicas without a random draw per request.
import { randomBytes } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';
/** The provider's own request id, when the gateway relays an answer that carried one. */
export const UPSTREAM_REQUEST_ID_HEADER = 'x-upstream-request-id';
export const MAX_REQUEST_ID_LENGTH = 128;

/** Letters, digits and `._:+=/@-`: UUIDs, ULIDs, base64 and the usual tracing ids, never a space, quote or control character. */
const SAFE = /^[A-Za-z0-9._:+=/@-]+$/;

// 48 random bits per process (8 base64url characters): two processes share a prefix with a
// negligible chance, and the counter keeps one process's ids apart.
const PREFIX = `${randomBytes(6).toString('base64url')}-`;
let counter = 0;

/** A fresh id: `<8 random characters>-<counter in base 36>`. */
export function newRequestId(): string {
  return PREFIX + (counter++).toString(36).padStart(6, '0');
}

/** The client's id when it is acceptable, else undefined (a repeated header arrives joined by ", " and is refused). */
export function acceptableRequestId(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_REQUEST_ID_LENGTH) return undefined;
  return SAFE.test(value) ? value : undefined;
}

/** The id a request goes by: the client's, when acceptable, else a new one. */
export function requestIdFrom(value: string | string[] | undefined): string {
  return acceptableRequestId(value) ?? newRequestId();
}
