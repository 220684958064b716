// GET /api/config (the stored document, every secret masked), PUT /api/config (the client settings),
// GET /api/config/settings (the Settings page's view of them), GET /api/version, GET /api/models.
import { readFileSync } from 'node:fs';
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { providerModels } from '../pipeline/provider-models.ts';
import { invalidRequest } from '../unified/errors.ts';
import { log } from '../log.ts';
import { maskTree } from './mask.ts';
import { queryParam, reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { vaultSecrets } from '../config/vault.ts';
import { ClientConfigSchema, type ClientConfig, type GatewayConfig } from '../schema/gateway.ts';
import { checkSchema, conflict, invalidFields, objectBody } from './errors.ts';
import { write } from './write.ts';
import { clientSettings, UNBUILT_FIELDS } from './client-settings.ts';
import type { ClientSettingsAnswer } from './answers.ts';

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
    .put(async (req: Request, res: Response) => {
      const client = await updateClient(service, req.body);
      reply(res, 200, { message: 'configuration updated', client_config: maskTree(client) });
    })
    .all(methodNotAllowed);

  router
    .route('/config/settings')
    .get((_req: Request, res: Response) => reply(res, 200, settingsAnswer(service)))
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

/** Members of the reference's PUT body this gateway does not take here, and where to change them instead. */
const ELSEWHERE: Readonly<Record<string, string>> = {
  framework_config: 'pricing sync is not built: prices come from the built-in table and pricing_overrides',
  auth_config: 'the dashboard credentials are changed in config.json (governance.auth_config) or the chart',
};

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** RFC 7386 merge: objects merge member by member, `null` removes (the default applies again), anything else replaces. */
export function mergeClient(stored: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isObject(v) && isObject(out[k])) Object.defineProperty(out, k, { value: mergeClient(out[k] as Record<string, unknown>, v), enumerable: true, writable: true, configurable: true });
    // defineProperty, not assignment: a `__proto__` key stays a plain field (and is refused by validation).
    else Object.defineProperty(out, k, { value: isObject(v) ? mergeClient({}, v) : v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * PUT /api/config `{client_config: {...}}`: merged into the stored client section and checked like
 * config.json. A setting config.json (or the environment) sets is refused with a 409 naming it
 * unless sent unchanged; one of a feature not built is refused, since nothing would read it.
 */
async function updateClient(service: ConfigService, rawBody: unknown): Promise<ClientConfig> {
  const body = objectBody(rawBody, 'configuration change');
  const elsewhere = Object.keys(body).filter((k) => k !== 'client_config');
  if (elsewhere.length) throw invalidFields('configuration change', elsewhere.map((k) => ({ path: k, message: ELSEWHERE[k] ? `not changed through /api/config: ${ELSEWHERE[k]}` : 'unknown member: /api/config changes client_config' })));
  const patch = body.client_config;
  if (!isObject(patch)) throw invalidFields('configuration change', [{ path: 'client_config', message: 'must be an object of client settings' }]);
  const unbuilt = Object.keys(patch).filter((k) => UNBUILT_FIELDS.has(k) && patch[k] !== null);
  if (unbuilt.length) throw invalidFields('client_config', unbuilt.map((k) => ({ path: `client_config.${k}`, message: 'this feature is not built: the setting is accepted in config.json for compatibility, and nothing reads it' })));
  const stored = service.document().client ?? {};
  for (const k of Object.keys(patch)) {
    const owner = service.ownerOf('client', k);
    const changed = JSON.stringify(mergeClient(stored, { [k]: patch[k] })[k]) !== JSON.stringify((stored as Record<string, unknown>)[k]);
    if (changed && (owner?.owner === 'file' || owner?.owner === 'environment') && k in stored) {
      throw conflict(owner.owner === 'file' ? `client_config.${k} is set in the configuration file ${owner.source} and read-only through /api: edit the file instead` : `client_config.${k} comes from the environment variables and is read-only through /api: change the environment and restart`, `client_config.${k}`);
    }
  }
  const next = checkSchema(ClientConfigSchema, mergeClient(stored, patch), 'client_config', 'client_config');
  await write(service, 'client_config', (draft, ctx) => {
    if (Object.keys(next).length) draft.client = next;
    else delete draft.client;
    ctx.alias('client', 'client_config');
  });
  return next;
}

function settingsAnswer(service: ConfigService): ClientSettingsAnswer {
  const origin = service.origin();
  const status = service.status();
  return {
    // In Kubernetes mode the whole document is the operator's rendering: a setting it holds is Kubernetes'.
    settings: clientSettings(service.document().client, (field) => service.ownerOf('client', field) ?? (origin ? { owner: 'kubernetes' } : undefined)),
    read_only: origin !== undefined,
    ...(origin && { read_only_reason: `the configuration is managed by ${origin.managedBy}: change ${origin.editWith}` }),
    persistent: status.store.persistent,
    store: { kind: status.store.kind, ...(status.store.location !== undefined && { location: status.store.location }) },
  };
}
