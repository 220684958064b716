// /api/plugins and /api/plugins/{name}: the config document's `plugins` array (the reference
// config's item shape: name, enabled, config, path, version, placement, order). Disabling a plugin
// keeps its config; secrets inside a plugin config are masked in answers and kept when sent back masked.
import { Router, type Request, type Response } from 'express';
import { Type, type Static } from '@sinclair/typebox';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import { GatewayError } from '../unified/errors.ts';
import { checkSchema, conflict, invalidFields, notFound, objectBody } from './errors.ts';
import { mergePatch, namedParam, reply, without } from './http.ts';
import { SAFE_ID, SAFE_ID_RULE } from '../schema/names.ts';
import { maskTree, unmask } from './mask.ts';
import { write } from './write.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { markManaged } from './managed.ts';
import type { PluginView } from './answers.ts';
import { BUILT_PLUGINS, pluginNotBuilt } from '../config/safety.ts';
import { SEMANTIC_CACHE_PLUGIN, vectorStoreProblem } from '../schema/cache.ts';

export const PluginSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    enabled: Type.Boolean(),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    path: Type.Optional(Type.String()),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
    placement: Type.Optional(Type.Union([Type.Literal('pre_builtin'), Type.Literal('post_builtin')])),
    order: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);
export type Plugin = Static<typeof PluginSchema>;

/** Fields of the reference's plugin answers that are not stored. */
const RESPONSE_ONLY = ['id', 'actualName', 'isCustom', 'status', 'created_at', 'updated_at', 'config_hash'];

/** Why a built plugin cannot run on this process (e.g. its store failed to open), if it cannot; asked on every read, so it follows the live config. */
export type PluginProblem = (name: string) => string | undefined | Promise<string | undefined>;

/**
 * The plugin's status as it really is: `active` only for a plugin this gateway runs. One that is
 * not built, or cannot run here, is `error` (the reference's status of a plugin that failed to load)
 * with the reason in `logs`, enabled or not: its configuration is stored, nothing runs.
 */
export async function viewPlugin(p: Plugin, problem: PluginProblem = () => undefined): Promise<PluginView> {
  const reason = BUILT_PLUGINS.has(p.name) ? await problem(p.name) : pluginNotBuilt(p.name);
  const status = !p.enabled ? ('disabled' as const) : reason === undefined ? ('active' as const) : ('error' as const);
  return {
    ...p,
    // maskTree keeps the object's shape; only string values change.
    ...(p.config && { config: maskTree(p.config) as Record<string, unknown> }),
    isCustom: p.path !== undefined,
    status: { name: p.name, status, logs: reason === undefined ? [] : [reason], types: [] },
  };
}

/** Spec rule 9: the cache is enabled only once a vector store is (400 naming vector_store). */
function storeFirst(draft: GatewayConfig, name: string): void {
  if (name !== SEMANTIC_CACHE_PLUGIN) return;
  const problem = vectorStoreProblem(draft);
  if (problem) throw invalidFields('plugin', [problem]);
}

function pluginsOf(doc: GatewayConfig): Plugin[] {
  const v = (doc as Record<string, unknown>).plugins;
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new GatewayError(500, "the config document's 'plugins' section is not an array", { type: 'internal_error' });
  return v as Plugin[];
}

function draftPlugins(draft: GatewayConfig): Plugin[] {
  const record = draft as Record<string, unknown>;
  const list = pluginsOf(draft);
  record.plugins = list;
  return list;
}

export function pluginsRouter(service: ConfigService, problem?: PluginProblem): Router {
  const router = Router();
  const view = async (p: Plugin) => markManaged(service, 'plugins', p.name, await viewPlugin(p, problem));
  const find = (name: string): Plugin => {
    const p = pluginsOf(service.document()).find((x) => x.name === name);
    if (!p) throw notFound('plugin', name);
    return p;
  };

  router
    .route('/')
    .get(async (_req: Request, res: Response) => {
      const plugins = await Promise.all(pluginsOf(service.document()).map(view));
      reply(res, 200, { plugins, count: plugins.length });
    })
    .post(async (req: Request, res: Response) => {
      const body = without(objectBody(req.body, 'plugin'), RESPONSE_ONLY);
      // A plugin added without saying otherwise is meant to run.
      const plugin = checkSchema(PluginSchema, { enabled: true, ...body }, 'plugin');
      // A name this gateway cannot run would be stored and never run: refused, naming it.
      if (!BUILT_PLUGINS.has(plugin.name)) {
        throw invalidFields('plugin', [{ path: 'name', message: `unknown plugin '${plugin.name}': this gateway runs ${[...BUILT_PLUGINS].join(', ')}` }]);
      }
      await write(service, 'plugin', (draft, ctx) => {
        const list = draftPlugins(draft);
        if (list.some((p) => p.name === plugin.name)) throw conflict(`plugin '${plugin.name}' already exists`, 'name');
        list.push(plugin);
        ctx.alias(`plugins[${list.length - 1}]`, '');
        storeFirst(draft, plugin.name);
      });
      reply(res, 201, { message: 'plugin created successfully', plugin: await view(find(plugin.name)) });
    })
    .all(methodNotAllowed);

  router
    .route('/:name')
    .get(async (req: Request, res: Response) => reply(res, 200, await view(find(namedParam(req, 'name', SAFE_ID, SAFE_ID_RULE)))))
    .put(async (req: Request, res: Response) => {
      const name = namedParam(req, 'name', SAFE_ID, SAFE_ID_RULE);
      const body = without(objectBody(req.body, 'plugin'), RESPONSE_ONLY);
      if (body.name !== undefined && body.name !== name) throw invalidFields('plugin', [{ path: 'name', message: 'cannot be changed (delete and create instead)' }]);
      await write(service, 'plugin', (draft, ctx) => {
        const list = draftPlugins(draft);
        const index = list.findIndex((p) => p.name === name);
        if (index < 0) throw notFound('plugin', name);
        const stored = list[index];
        // Fields not sent are kept: `{enabled: false}` disables and keeps the config.
        const merged = unmask(mergePatch(stored as Record<string, unknown>, body), stored);
        list[index] = checkSchema(PluginSchema, merged, 'plugin');
        ctx.alias(`plugins[${index}]`, '');
        storeFirst(draft, name);
      });
      reply(res, 200, { message: 'plugin updated successfully', plugin: await view(find(name)) });
    })
    .delete(async (req: Request, res: Response) => {
      const name = namedParam(req, 'name', SAFE_ID, SAFE_ID_RULE);
      await write(service, 'plugin', (draft) => {
        const list = draftPlugins(draft);
        const index = list.findIndex((p) => p.name === name);
        if (index < 0) throw notFound('plugin', name);
        list.splice(index, 1);
      });
      reply(res, 200, { message: 'plugin deleted successfully' });
    })
    .all(methodNotAllowed);

  return router;
}

