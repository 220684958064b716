// Bounds on what one client connection may hold: fixed when the listener starts (command-line
// flags), the same on HTTP/1.1 and h2c. The body size cap is per config (`client.max_request_body_size_mb`).

export interface ListenerLimits {
  /** Time from connection (or the previous request) to complete request headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body (answering may take longer). */
  requestTimeoutMs: number;
  /** Largest request header block (request line / pseudo-headers included). */
  maxHeaderBytes: number;
  /** HTTP/2 streams one connection may have open at once. */
  h2MaxStreams: number;
  /** An idle keep-alive connection (HTTP/1.1) or session (h2c) closes after this. */
  keepAliveMs: number;
}

export const DEFAULT_LIMITS: ListenerLimits = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 120_000,
  maxHeaderBytes: 16 * 1024,
  h2MaxStreams: 100,
  keepAliveMs: 65_000,
};
