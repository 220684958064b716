// The last line of defence for availability. Every request path catches its own errors (server.ts
// answers 500 for a handler that throws; sockets, requests, responses and HTTP/2 sessions all have
// 'error' listeners), so nothing here should ever fire. If something still slips through, it is a
// bug in one request's handling, and the choice is between:
// - exiting (node's default): the textbook advice, since state may be inconsistent afterwards; but
//   a client who found the input can repeat it and keep every worker down (restarts take seconds,
//   in-flight requests of all other clients die with it);
// - logging and serving on: what requests share is immutable (config snapshots) or updated in
//   single synchronous steps (counters, metrics), so a request that failed half-way leaves at
//   most its own socket and charges behind; the blast radius is that one request.
// We log at error (with the stack, for the bug report) and serve on, and the fuzz suite fails on any
// such line, so these bugs are still found.
import { log } from '../log.ts';

let installed = false;

export function installProcessGuards(): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (err: Error, origin) => {
    log.error('uncaught exception (serving on)', { origin, error: err?.stack ?? String(err) });
  });
  // Without a listener node turns an unhandled rejection into an uncaught exception and exits.
  process.on('unhandledRejection', (reason: unknown) => {
    log.error('unhandled promise rejection (serving on)', { error: (reason as Error)?.stack ?? String(reason) });
  });
}
