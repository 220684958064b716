// GET /api/config (the stored document, every secret masked), GET /api/version, GET /api/models.
import { readFileSync } from 'node:fs';
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { providerModels } from '../pipeline/provider-models.ts';
import { invalidRequest } from '../unified/errors.ts';
import { log } from '../log.ts';
import { maskTree } from './mask.ts';
import { queryParam, reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { vaultSecrets } from '../config/vault.ts';

/** Routing rules' query-builder trees carry `value` fields that are not secrets. */
const notSecret = (path: string) => /^governance\.routing_rules\[\d+\]\.query$/.test(path);

/** The config document as GET /api/config shows it: every secret masked, env.VAR references as they are. */
export function maskDocument(doc: GatewayConfig): unknown {
  return maskTree(doc, notSecret);
}

/** The package version: package.json is two levels above proxy/src (and dist/proxy/src). */
export function packageVersion(): string {
  for (const rel of ['../../../package.json', '../../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'skybridge' && pkg.version) return pkg.version;
    } catch {
      // not here: try the next level up
    }
  }
  return '0.0.0';
}

/** The reference answers the models list 5 at a time unless asked for more. */
const DEFAULT_MODELS_LIMIT = 5;

export function configRouter(service: ConfigService): Router {
  const router = Router();
  const version = packageVersion();

  router
    .route('/config')
    .get((_req: Request, res: Response) => reply(res, 200, maskDocument(service.document())))
    .all(methodNotAllowed);

  // Where the configuration comes from and is kept, and the objects created through /api that are
  // set aside (not served) because config.json defines them too.
  router
    .route('/config/status')
    .get((_req: Request, res: Response) => reply(res, 200, service.status()))
    .all(methodNotAllowed);

  // Where vault references are read from and whether it answers (`state: down`: the last good
  // values are served); paths and errors only, never a value.
  router
    .route('/vault/status')
    .get((_req: Request, res: Response) => reply(res, 200, vaultSecrets.status()))
    .all(methodNotAllowed);

  // The reference answers a bare JSON string.
  router
    .route('/version')
    .get((_req: Request, res: Response) => reply(res, 200, version))
    .all(methodNotAllowed);

  router
    .route('/models')
    .get(async (req: Request, res: Response) => {
      const query = queryParam(req, 'query')?.toLowerCase();
      const only = queryParam(req, 'provider');
      const keyFilter = queryParam(req, 'keys')?.split(',').map((s) => s.trim()).filter(Boolean);
      const limitText = queryParam(req, 'limit');
      const limit = limitText === undefined ? DEFAULT_MODELS_LIMIT : Number(limitText);
      if (!Number.isInteger(limit) || limit < 0) throw invalidRequest('limit must be an integer >= 0 (0: no limit)', 'limit');
      const snap = service.current();
      let providers = [...snap.providers.values()].filter((p) => p.operations.has('models'));
      if (only !== undefined) {
        if (!snap.providers.has(only)) throw invalidRequest(`provider '${only}' is not configured`, 'provider');
        providers = providers.filter((p) => p.name === only);
      }
      const controller = new AbortController();
      res.once('close', () => controller.abort());
      const lists = await Promise.all(providers.map((p) => modelsOf(p, controller.signal)));
      let models = lists.flat();
      if (query) models = models.filter((m) => m.name.toLowerCase().includes(query));
      if (keyFilter?.length) models = models.filter((m) => m.accessible_by_keys.some((k) => keyFilter.includes(k)));
      reply(res, 200, { models: limit === 0 ? models : models.slice(0, limit), total: models.length });
    })
    .all(methodNotAllowed);

  return router;
}

interface ModelRow {
  name: string;
  provider: string;
  accessible_by_keys: string[];
}

async function modelsOf(p: ProviderRuntime, signal: AbortSignal): Promise<ModelRow[]> {
  try {
    const entries = await providerModels(p, signal);
    return entries.map((e) => {
      const name = e.id.slice(p.name.length + 1);
      return { name, provider: p.name, accessible_by_keys: p.keys.filter((k) => !k.models || k.models.has(name)).map((k) => k.id) };
    });
  } catch (err) {
    // One provider down must not hide the others.
    log.warn('list-models failed for a provider', { provider: p.name, error: (err as Error).message });
    return [];
  }
}
