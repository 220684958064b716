// SIGTERM: stop taking new work, let what is in flight finish (streams included) up to a grace
// period, then close what the process holds. Readiness fails at once, so a load balancer that still
// probes stops sending; the listener closes, keep-alive connections are closed as they go idle, and
// whatever is still open when the grace period ends is cut.
import type { Server } from 'node:http';
import { log } from '../log.ts';
import { markDraining } from '../state/readiness.ts';

/** After the grace period, closing the stores gets this long before the process exits anyway. */
const CLOSE_TIMEOUT_MS = 5000;

export function gracefulShutdown(server: Server, opts: { graceMs: number; close: () => Promise<unknown> }): (signal: string) => void {
  let started = false;
  let exiting = false;
  const exit = () => {
    if (exiting) return;
    exiting = true;
    setTimeout(() => process.exit(0), CLOSE_TIMEOUT_MS).unref();
    void opts.close().finally(() => process.exit(0));
  };
  return (signal) => {
    if (started) return;
    started = true;
    markDraining();
    log.info('shutting down: finishing requests in flight', { signal, grace_seconds: opts.graceMs / 1000 });
    // A keep-alive connection whose answer just ended is idle: close it rather than wait for its next request.
    const idle = setInterval(() => server.closeIdleConnections(), 250);
    server.close(() => {
      clearInterval(idle);
      exit();
    });
    server.closeIdleConnections();
    setTimeout(() => {
      clearInterval(idle);
      log.warn('shutdown grace period over: closing the connections still open');
      server.closeAllConnections();
      exit();
    }, opts.graceMs).unref();
  };
}
