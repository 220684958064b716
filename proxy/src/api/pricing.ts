// GET /api/governance/pricing: the price in force for every model the gateway knows (the built-in
// list, and the models configured providers name or list), where it comes from (built-in, an
// override, or none: charged 0), and which override applies. Overrides are written through
// /api/governance/pricing-overrides (any provider) or a store-managed provider's pricing_overrides.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { Snapshot } from '../config/snapshot.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { providerModels } from '../pipeline/provider-models.ts';
import { pricesInForce, type KnownProvider } from '../governance/pricing/in-force.ts';
import { log } from '../log.ts';
import { reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';

/** How long a provider's list-models may take before the page goes without its answer. */
const LIST_TIMEOUT_MS = 5_000;

export function pricingRouter(service: ConfigService): Router {
  const router = Router({ caseSensitive: true });
  router
    .route('/')
    .get(async (_req: Request, res: Response) => {
      const snap = service.current();
      const controller = new AbortController();
      res.once('close', () => controller.abort());
      const providers = await Promise.all([...snap.providers.values()].map((p) => knownProvider(snap, p, controller.signal)));
      const config = snap.config;
      const providerOverrides = Object.fromEntries(Object.entries(config.providers ?? {}).map(([name, p]) => [name, p.pricing_overrides]));
      reply(res, 200, pricesInForce({ providers, records: config.governance?.pricing_overrides ?? [], providerOverrides }));
    })
    .all(methodNotAllowed);
  return router;
}

async function knownProvider(snap: Snapshot, p: ProviderRuntime, signal: AbortSignal): Promise<KnownProvider> {
  const configured = new Set<string>();
  for (const k of p.keys) for (const m of k.models ?? []) configured.add(m);
  for (const vk of snap.config.governance?.virtual_keys ?? []) {
    for (const pc of vk.provider_configs ?? []) if (pc.provider === p.name) for (const m of pc.allowed_models ?? []) if (m !== '*') configured.add(m);
  }
  for (const mc of snap.config.governance?.model_configs ?? []) if (mc.provider === p.name) configured.add(mc.model_name);
  let listed: string[] = [];
  if (p.operations.has('models')) {
    try {
      listed = (await providerModels(p, AbortSignal.any([signal, AbortSignal.timeout(LIST_TIMEOUT_MS)]))).map((e) => e.id.slice(p.name.length + 1));
    } catch (err) {
      // A provider down must not hide the others' prices; its configured models are still listed.
      log.warn('pricing: list-models failed for a provider', { provider: p.name, error: (err as Error).message });
    }
  }
  return { name: p.name, configured: [...configured], listed };
}
