import type { Exchange } from '../http/exchange.ts';
import { sendJson } from '../http/respond.ts';
import { notReadyReason } from '../state/readiness.ts';

/**
 * Liveness and what the gateway is missing. Always 200 while the process serves: a dependency down
 * (Redis) makes only the requests that need it fail, so restarting the gateway would not help;
 * `status: "degraded"` and `dependencies` say which one is away.
 */
export function health(ex: Exchange): void {
  const dependencies = ex.services.dependencies.states();
  const degraded = Object.values(dependencies).some((s) => s !== 'ok');
  sendJson(ex.res, 200, {
    status: degraded ? 'degraded' : 'ok',
    config_hash: ex.snapshot.hash,
    providers: [...ex.snapshot.providers.keys()],
    ...(Object.keys(dependencies).length > 0 && { dependencies: { ...dependencies } }),
  });
}

/**
 * Readiness: 200 once a configuration is served, 503 with the reason before that, while draining,
 * and while the counter store does not answer when the configuration has budgets or rate limits
 * (governance fails closed: every governed request would be refused here).
 */
export function ready(ex: Exchange): void {
  const reason = notReadyReason() ?? (ex.snapshot.governance.hasLimits ? ex.services.dependencies.unready() : undefined);
  if (reason) sendJson(ex.res, 503, { status: 'not_ready', reason });
  else sendJson(ex.res, 200, { status: 'ready', config_hash: ex.snapshot.hash });
}

export async function metrics(ex: Exchange): Promise<void> {
  const registry = ex.services.metrics.registry;
  const text = await registry.metrics();
  ex.res.writeHead(200, { 'content-type': registry.contentType });
  ex.res.end(text);
}
