// SIGTERM: stop taking new work, let what is in flight finish (streams included) up to a grace
// period, then close what the process holds. Readiness fails at once, so a load balancer that still
// probes stops sending; the listener closes, keep-alive connections are closed as they go idle, and
// whatever is still open when the grace period ends is cut.
import type { Server } from 'node:http';
import { log } from '../log.ts';
import { markDraining } from '../state/readiness.ts';

/** After the grace period, closing the stores gets this long before the process exits anyway. */
const CLOSE_TIMEOUT_MS = 5000;

/** Closes the listener and waits for its connections to end, cutting those still open after `graceMs`. */
export function drainServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    // A keep-alive connection whose answer just ended is idle: close it rather than wait for its next request.
    const idle = setInterval(() => server.closeIdleConnections(), 250);
    const grace = setTimeout(() => {
      clearInterval(idle);
      log.warn('shutdown grace period over: closing the connections still open');
      server.closeAllConnections();
      resolve();
    }, graceMs).unref();
    server.close(() => {
      clearInterval(idle);
      clearTimeout(grace);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** The signal handler of the command line: drain the gateway, close it, exit 0. */
export function gracefulShutdown(gateway: { drain(): Promise<void>; close(): Promise<void> }, graceMs: number): (signal: string) => void {
  let started = false;
  return (signal) => {
    if (started) return;
    started = true;
    markDraining();
    log.info('shutting down: finishing requests in flight', { signal, grace_seconds: graceMs / 1000 });
    void gateway.drain().then(() => {
      setTimeout(() => process.exit(0), CLOSE_TIMEOUT_MS).unref();
      void gateway.close().finally(() => process.exit(0));
    });
  };
}
