// SIGTERM: stop taking new work, let what is in flight finish (streams included) up to a grace
// period, then close what the process holds. Readiness fails at once, so a load balancer that still
// probes stops sending; the listener closes, keep-alive connections are closed as they go idle, and
// whatever is still open when the grace period ends is cut.
import type { Server } from 'node:http';
import { log } from '../log.ts';
import { markDraining } from '../state/readiness.ts';

/** After the grace period, closing the stores gets this long before the process exits anyway. */
const CLOSE_TIMEOUT_MS = 5000;

/** After the grace period, streams ended with an error event get this long to write it before their connections are cut. */
const CUT_FLUSH_MS = 1000;

/**
 * Closes the listener and waits for its connections to end. Once `graceMs` is over, the streams
 * still relayed are ended with an in-band error (`cutStreams`), and whatever is still open a moment
 * later is cut.
 */
export function drainServer(server: Server, graceMs: number, cutStreams: () => number = () => 0): Promise<void> {
  return new Promise((resolve) => {
    let over: NodeJS.Timeout | undefined;
    // A keep-alive connection whose answer just ended is idle: close it rather than wait for its next request.
    const idle = setInterval(() => server.closeIdleConnections(), 250);
    const grace = setTimeout(() => {
      const streams = cutStreams();
      log.warn('shutdown grace period over: ending the streams and closing the connections still open', { streams });
      over = setTimeout(() => {
        clearInterval(idle);
        server.closeAllConnections();
        resolve();
      }, streams > 0 ? CUT_FLUSH_MS : 0).unref();
    }, graceMs).unref();
    server.close(() => {
      clearInterval(idle);
      clearTimeout(grace);
      clearTimeout(over);
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
