// Whether this process should be sent traffic (the readiness probe, /ready), apart from whether it
// is alive (/health). Not ready while it has no configuration to serve (a Kubernetes proxy started
// before the operator rendered one, or while the API server is unreachable) and while it drains on
// shutdown. Process-wide, like the signals that change it. /ready also asks the gateway's
// dependencies (dependencies.ts): a counter store that does not answer makes it 503 too.
let reason: string | undefined = 'starting';
let draining = false;

export function markReady(): void {
  if (!draining) reason = undefined;
}

/** For good: a draining process never becomes ready again. */
export function markDraining(): void {
  draining = true;
  reason = 'shutting down';
}

export function markNotReady(why: string): void {
  reason = why;
}

/** Undefined when ready, else why not. */
export function notReadyReason(): string | undefined {
  return reason;
}
