// /api/providers, /api/providers/{provider}, /api/providers/{provider}/keys[/{key_id}], /api/keys.
// Key values and credentials are never answered in full (masked; env.VAR shown as is); a masked
// value sent back unchanged keeps the stored one. A key's id derives from provider and key name
// (schema/key-id.ts) so every replica agrees on it without storing it.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import { ProviderConfigSchema, ProviderKeySchema, type GatewayConfig, type ProviderConfig, type ProviderKeyConfig } from '../schema/gateway.ts';
import { keyId } from '../schema/key-id.ts';
import { PROVIDER_KINDS } from '../providers/catalog.ts';
import { checkSchema, conflict, invalidFields, notFound, objectBody } from './errors.ts';
import { mergePatch, namedParam, reply, without } from './http.ts';
import { nameProblem, own, PROVIDER_NAME, PROVIDER_NAME_RULE, SAFE_ID, SAFE_ID_RULE } from '../schema/names.ts';
import { maskTree, unmask } from './mask.ts';
import { providerKeyReferrers, providerReferrers, stillUsed } from './references.ts';
import { write } from './write.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { markManaged } from './managed.ts';

const providerParam = (req: Request): string => namedParam(req, 'provider', PROVIDER_NAME, PROVIDER_NAME_RULE);
const keyIdParam = (req: Request): string => namedParam(req, 'key_id', SAFE_ID, SAFE_ID_RULE);
const builtIn = (name: string) => own(PROVIDER_KINDS, name);
/** Fields of the reference gateway's provider answers that are not stored. */
const PROVIDER_RESPONSE_ONLY = ['provider_status', 'status', 'description', 'config_hash'];
const KEY_RESPONSE_ONLY = ['config_hash', 'status', 'description', 'provider'];

export function viewKey(provider: string, key: ProviderKeyConfig): Record<string, unknown> {
  return { id: keyId(provider, key.name), ...(maskTree(key) as Record<string, unknown>), enabled: (key.weight ?? 1) > 0 };
}

export function viewProvider(name: string, cfg: ProviderConfig): Record<string, unknown> {
  const rest = maskTree(without(cfg as Record<string, unknown>, ['keys'])) as Record<string, unknown>;
  return { name, ...rest, keys: (cfg.keys ?? []).map((k) => viewKey(name, k)), provider_status: 'active' };
}

/**
 * A key body (the reference's Key shape) as stored: `id` checked against the derived id,
 * `enabled` mapped onto `weight` (0 disables), masked secrets restored from `stored`.
 */
export function normalizeKey(provider: string, body: Record<string, unknown>, stored: ProviderKeyConfig | undefined, prefix = ''): ProviderKeyConfig {
  const at = (p: string) => (prefix ? `${prefix}.${p}` : p);
  const given = without(body, KEY_RESPONSE_ONLY);
  const { id, enabled } = given;
  delete given.id;
  delete given.enabled;
  const merged = stored ? (unmask(mergePatch(stored as Record<string, unknown>, given), stored) as Record<string, unknown>) : given;
  if (enabled !== undefined && typeof enabled !== 'boolean') throw invalidFields('provider key', [{ path: at('enabled'), message: 'must be boolean' }]);
  if (enabled === false) merged.weight = 0;
  if (enabled === true && merged.weight === 0) {
    if ('weight' in given) throw invalidFields('provider key', [{ path: at('weight'), message: 'must be above 0 for an enabled key' }]);
    merged.weight = 1;
  }
  const key = checkSchema(ProviderKeySchema, merged, 'provider key', prefix);
  if (id !== undefined) {
    const expected = stored ? keyId(provider, stored.name) : keyId(provider, key.name);
    if (id !== expected) throw invalidFields('provider key', [{ path: at('id'), message: `key ids derive from provider and key name; this key's id is '${expected}' (omit id)` }]);
  }
  return key;
}

function providerBody(body: Record<string, unknown>): Record<string, unknown> {
  return without(body, ['provider', 'name', ...PROVIDER_RESPONSE_ONLY]);
}

function findKey(cfg: ProviderConfig, provider: string, id: string): number {
  return (cfg.keys ?? []).findIndex((k) => keyId(provider, k.name) === id);
}

export function providersRouter(service: ConfigService): Router {
  const router = Router();
  const current = (name: string): ProviderConfig => {
    const cfg = own(service.document().providers, name);
    if (!cfg) throw notFound('provider', name);
    return cfg;
  };
  const inDraft = (draft: GatewayConfig, name: string): ProviderConfig => {
    const cfg = own(draft.providers, name);
    if (!cfg) throw notFound('provider', name);
    return cfg;
  };

  router
    .route('/')
    .get((_req: Request, res: Response) => {
      const providers = Object.entries(service.document().providers ?? {}).map(([name, cfg]) => markManaged(service, 'providers', name, viewProvider(name, cfg)));
      reply(res, 200, { providers, total: providers.length });
    })
    .post(async (req: Request, res: Response) => {
      const body = objectBody(req.body, 'provider');
      const name = body.provider ?? body.name;
      const problem = name === undefined ? 'is required' : nameProblem(name, PROVIDER_NAME, PROVIDER_NAME_RULE);
      if (problem || typeof name !== 'string') throw invalidFields('provider', [{ path: 'provider', message: problem ?? 'must be a string' }]);
      const rest = providerBody(body);
      if (!builtIn(name) && rest.custom_provider_config === undefined) {
        throw invalidFields('provider', [{ path: 'provider', message: `unknown provider '${name}': built-in providers are ${Object.keys(PROVIDER_KINDS).join(', ')}; a custom provider needs custom_provider_config.base_provider_type` }]);
      }
      if (rest.keys !== undefined && !Array.isArray(rest.keys)) throw invalidFields('provider', [{ path: 'keys', message: 'must be array' }]);
      const keys = Array.isArray(rest.keys) ? rest.keys.map((k: unknown, i: number) => normalizeKey(name, objectBody(k, 'provider key'), undefined, `keys[${i}]`)) : undefined;
      const cfg = checkSchema(ProviderConfigSchema, { ...rest, ...(keys && { keys }) }, 'provider');
      await write(service, 'provider', (draft, ctx) => {
        draft.providers ??= {};
        if (own(draft.providers, name)) throw conflict(`provider '${name}' already exists`, 'provider');
        draft.providers[name] = cfg;
        ctx.alias(`providers.${name}`, '');
      });
      reply(res, 201, viewProvider(name, current(name)));
    })
    .all(methodNotAllowed);

  router
    .route('/:provider')
    .get((req: Request, res: Response) => {
      const name = providerParam(req);
      // A read: the stored provider as it is (viewProvider copies what it shows).
      const cfg = own(service.storedDocument().providers, name);
      if (!cfg) throw notFound('provider', name);
      reply(res, 200, markManaged(service, 'providers', name, viewProvider(name, cfg)));
    })
    .put(async (req: Request, res: Response) => {
      const name = providerParam(req);
      const rest = providerBody(objectBody(req.body, 'provider'));
      if (rest.keys !== undefined && !Array.isArray(rest.keys)) throw invalidFields('provider', [{ path: 'keys', message: 'must be array' }]);
      await write(service, 'provider', (draft, ctx) => {
        const stored = inDraft(draft, name);
        const merged = unmask(mergePatch(stored as Record<string, unknown>, without(rest, ['keys'])), stored) as Record<string, unknown>;
        if (Array.isArray(rest.keys)) {
          const storedKeys = stored.keys ?? [];
          const keys = rest.keys.map((k: unknown, i: number) => {
            const body = objectBody(k, 'provider key');
            return normalizeKey(name, body, storedKeys.find((s) => s.name === body.name), `keys[${i}]`);
          });
          // A key that goes away must not leave virtual keys or rules pinned to it.
          for (const s of storedKeys) {
            if (keys.some((k) => k.name === s.name)) continue;
            const users = providerKeyReferrers(draft, name, s.name);
            if (users.length) throw conflict(stillUsed(`key '${s.name}' of provider '${name}'`, users), 'keys');
          }
          merged.keys = keys;
        }
        draft.providers![name] = checkSchema(ProviderConfigSchema, merged, 'provider');
        ctx.alias(`providers.${name}`, '');
      });
      reply(res, 200, viewProvider(name, current(name)));
    })
    .delete(async (req: Request, res: Response) => {
      const name = providerParam(req);
      const deleted = await write(service, 'provider', (draft) => {
        const stored = inDraft(draft, name);
        const users = providerReferrers(draft, name);
        if (users.length) throw conflict(stillUsed(`provider '${name}'`, users));
        delete draft.providers![name];
        return stored;
      });
      reply(res, 200, viewProvider(name, deleted));
    })
    .all(methodNotAllowed);

  router
    .route('/:provider/keys')
    .get((req: Request, res: Response) => {
      const name = providerParam(req);
      const keys = (current(name).keys ?? []).map((k) => viewKey(name, k));
      reply(res, 200, { keys, total: keys.length });
    })
    .post(async (req: Request, res: Response) => {
      const name = providerParam(req);
      const body = objectBody(req.body, 'provider key');
      const key = await write(service, 'provider key', (draft, ctx) => {
        const cfg = inDraft(draft, name);
        const keyless = cfg.custom_provider_config?.is_key_less ?? builtIn(name)?.keyless ?? false;
        if (keyless) throw invalidFields('provider key', [{ path: '(root)', message: `provider '${name}' is keyless: keys cannot be added` }]);
        const k = normalizeKey(name, body, undefined);
        cfg.keys ??= [];
        if (cfg.keys.some((s) => s.name === k.name)) throw conflict(`provider '${name}' already has a key named '${k.name}' (id '${keyId(name, k.name)}')`, 'name');
        cfg.keys.push(k);
        ctx.alias(`providers.${name}.keys[${cfg.keys.length - 1}]`, '');
        return k;
      });
      reply(res, 201, viewKey(name, key));
    })
    .all(methodNotAllowed);

  router
    .route('/:provider/keys/:key_id')
    .get((req: Request, res: Response) => {
      const name = providerParam(req);
      const id = keyIdParam(req);
      const cfg = current(name);
      const index = findKey(cfg, name, id);
      if (index < 0) throw notFound(`key of provider '${name}'`, id);
      reply(res, 200, viewKey(name, cfg.keys![index]));
    })
    .put(async (req: Request, res: Response) => {
      const name = providerParam(req);
      const id = keyIdParam(req);
      const body = objectBody(req.body, 'provider key');
      const key = await write(service, 'provider key', (draft, ctx) => {
        const cfg = inDraft(draft, name);
        const index = findKey(cfg, name, id);
        if (index < 0) throw notFound(`key of provider '${name}'`, id);
        const stored = cfg.keys![index];
        const k = normalizeKey(name, body, stored);
        if (k.name !== stored.name) {
          // The id follows the name: whatever pins the old id or name would dangle.
          if (cfg.keys!.some((s, i) => i !== index && s.name === k.name)) throw conflict(`provider '${name}' already has a key named '${k.name}'`, 'name');
          const users = providerKeyReferrers(draft, name, stored.name);
          if (users.length) throw conflict(stillUsed(`key '${stored.name}' of provider '${name}'`, users) + ' (renaming a key changes its id)', 'name');
        }
        cfg.keys![index] = k;
        ctx.alias(`providers.${name}.keys[${index}]`, '');
        return k;
      });
      reply(res, 200, viewKey(name, key));
    })
    .delete(async (req: Request, res: Response) => {
      const name = providerParam(req);
      const id = keyIdParam(req);
      const deleted = await write(service, 'provider key', (draft) => {
        const cfg = inDraft(draft, name);
        const index = findKey(cfg, name, id);
        if (index < 0) throw notFound(`key of provider '${name}'`, id);
        const stored = cfg.keys![index];
        const users = providerKeyReferrers(draft, name, stored.name);
        if (users.length) throw conflict(stillUsed(`key '${stored.name}' of provider '${name}'`, users));
        const keyless = cfg.custom_provider_config?.is_key_less ?? builtIn(name)?.keyless ?? false;
        if (!keyless && cfg.keys!.length === 1) throw conflict(`key '${stored.name}' is the last key of provider '${name}', which needs one; delete the provider instead`);
        cfg.keys!.splice(index, 1);
        return stored;
      });
      reply(res, 200, viewKey(name, deleted));
    })
    .all(methodNotAllowed);

  return router;
}

/** GET /api/keys: every provider's keys, each with its provider. */
export function allKeysRouter(service: ConfigService): Router {
  const router = Router();
  router
    .route('/')
    .get((_req: Request, res: Response) => {
      const keys = Object.entries(service.document().providers ?? {}).flatMap(([name, cfg]) => (cfg.keys ?? []).map((k) => ({ ...viewKey(name, k), provider: name })));
      reply(res, 200, keys);
    })
    .all(methodNotAllowed);
  return router;
}
