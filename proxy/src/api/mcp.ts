// /api/mcp/*: the MCP clients of the config document (`mcp.client_configs`) with their live state
// on this replica, and /api/mcp-logs (the tool call records). Writes go through ConfigService like
// every other resource, so each replica reconciles its clients from the new snapshot. Header values
// are masked in answers and kept when sent back masked.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import { McpClientConfigSchema, type McpClientConfig } from '../schema/mcp.ts';
import { SAFE_ID, SAFE_ID_RULE } from '../schema/names.ts';
import type { McpManager } from '../mcp/manager.ts';
import type { McpConnection } from '../mcp/connection.ts';
import { clientId } from '../mcp/connection.ts';
import type { McpLogFilter, McpLogPage } from '../mcp/call-log.ts';
import { GatewayError } from '../unified/errors.ts';
import { checkSchema, conflict, invalidFields, notFound, objectBody } from './errors.ts';
import { mergePatch, namedParam, queryParam, reply, without } from './http.ts';
import { maskSecret, unmask } from './mask.ts';
import { maskUrlCredentials } from '../upstream/egress.ts';
import { governanceOf, write } from './write.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { markManaged } from './managed.ts';
import type { McpClientView } from './answers.ts';

/** Fields of answers (or of the reference's requests) that are not stored in the client config. */
const NOT_STORED = ['vk_configs', 'state', 'tools', 'oauth_config'];
/** How long a write waits for the new client's first connect attempt before answering. */
const SETTLE_MS = 5_000;

function sectionClients(doc: GatewayConfig): McpClientConfig[] {
  return doc.mcp?.client_configs ?? [];
}

function draftClients(draft: GatewayConfig): McpClientConfig[] {
  draft.mcp ??= {};
  draft.mcp.client_configs ??= [];
  return draft.mcp.client_configs;
}

/**
 * Header values, `NAME=value` entries of a stdio client's envs and credentials in URLs are masked,
 * except `env.VAR` references, which name no secret.
 */
function maskClient(c: McpClientConfig): McpClientConfig {
  const out = { ...c };
  // A URL's userinfo and credential query parameters (masked forms sent back keep the stored URL).
  if (c.connection_string) out.connection_string = maskUrlCredentials(c.connection_string);
  if (c.http_config) out.http_config = { ...c.http_config, url: maskUrlCredentials(c.http_config.url) };
  if (c.headers) out.headers = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k, maskSecret(v)]));
  if (c.stdio_config?.envs) out.stdio_config = { ...c.stdio_config, envs: c.stdio_config.envs.map(maskEnv) };
  return out;
}

function maskEnv(e: string): string {
  const eq = e.indexOf('=');
  return eq > 0 ? `${e.slice(0, eq + 1)}${maskSecret(e.slice(eq + 1))}` : e;
}

/** envs sent back as an answer showed them keep their stored values. */
function unmaskEnvs(merged: Record<string, unknown>, stored: McpClientConfig): void {
  const sc = merged.stdio_config as { envs?: unknown } | undefined;
  const before = stored.stdio_config?.envs ?? [];
  if (!sc || !Array.isArray(sc.envs)) return;
  sc.envs = sc.envs.map((e: unknown) => (typeof e === 'string' ? (before.find((b) => b !== e && maskEnv(b) === e) ?? e) : e));
}

interface VkEntry {
  mcp_client_name?: string;
  mcp_client_id?: string | number;
  tools_to_execute?: string[];
}

function vkEntriesFor(doc: GatewayConfig, c: McpClientConfig): { virtual_key_id: string; virtual_key_name: string; tools_to_execute: string[] }[] {
  const out: { virtual_key_id: string; virtual_key_name: string; tools_to_execute: string[] }[] = [];
  for (const vk of doc.governance?.virtual_keys ?? []) {
    for (const raw of (vk.mcp_configs ?? []) as VkEntry[]) {
      if (raw?.mcp_client_name === c.name || (raw?.mcp_client_id !== undefined && String(raw.mcp_client_id) === clientId(c))) {
        out.push({ virtual_key_id: vk.id, virtual_key_name: vk.name, tools_to_execute: raw.tools_to_execute ?? [] });
      }
    }
  }
  return out;
}

/** The reference's MCPClient: config, tools (function definitions), state; plus why it is in error. */
function view(service: ConfigService, doc: GatewayConfig, c: McpClientConfig, conn: McpConnection | undefined): McpClientView {
  const state = conn?.state ?? 'disconnected';
  return {
    config: markManaged(service, 'mcp_clients', clientId(c), { ...maskClient(c), client_id: clientId(c) }),
    tools: (conn?.tools ?? []).map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), parameters: t.inputSchema })),
    // The reference's states are connected, disconnected and error; a first attempt under way is reported as disconnected, with `connecting`.
    state: state === 'connecting' ? 'disconnected' : state,
    ...(state === 'connecting' && { connecting: true }),
    ...(conn?.lastError !== undefined && state === 'error' && { error: conn.lastError }),
    vk_configs: vkEntriesFor(doc, c),
  };
}

/** Waits (bounded) until the client made its first attempt, so the answer can tell its state. */
async function settled(mcp: McpManager, id: string): Promise<McpConnection | undefined> {
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline) {
    const conn = mcp.byId(id);
    if (conn && conn.state !== 'connecting') return conn;
    await new Promise((r) => setTimeout(r, 25));
  }
  return mcp.byId(id);
}

function checkVkConfigs(v: unknown): { virtual_key_id: string; tools_to_execute: string[] }[] {
  if (!Array.isArray(v)) throw invalidFields('MCP client', [{ path: 'vk_configs', message: 'must be an array of {virtual_key_id, tools_to_execute}' }]);
  return v.map((e, i) => {
    const r = e as Record<string, unknown>;
    if (!r || typeof r !== 'object' || typeof r.virtual_key_id !== 'string') throw invalidFields('MCP client', [{ path: `vk_configs[${i}].virtual_key_id`, message: 'is required (a virtual key id)' }]);
    if (!Array.isArray(r.tools_to_execute) || !r.tools_to_execute.every((t) => typeof t === 'string')) throw invalidFields('MCP client', [{ path: `vk_configs[${i}].tools_to_execute`, message: 'must be an array of tool names' }]);
    return { virtual_key_id: r.virtual_key_id, tools_to_execute: r.tools_to_execute as string[] };
  });
}

export function mcpRouter(service: ConfigService, mcp: McpManager): Router {
  const router = Router();
  const find = (id: string): McpClientConfig => {
    const c = sectionClients(service.document()).find((x) => clientId(x) === id);
    if (!c) throw notFound('MCP client', id);
    return c;
  };
  const answer = async (res: Response, status: number, message: string, id: string) => {
    const conn = await settled(mcp, id);
    const doc = service.document();
    const c = sectionClients(doc).find((x) => clientId(x) === id);
    reply(res, status, { status: 'success', message, ...(c && { client: view(service, doc, c, conn) }) });
  };

  router
    .route('/clients')
    .get((_req: Request, res: Response) => {
      mcp.apply(service.current());
      const doc = service.document();
      reply(res, 200, sectionClients(doc).map((c) => view(service, doc, c, mcp.byId(clientId(c)))));
    })
    .all(methodNotAllowed);

  router
    .route('/client')
    .post(async (req: Request, res: Response) => {
      const body = objectBody(req.body, 'MCP client');
      if (body.tool_pricing !== undefined) throw invalidFields('MCP client', [{ path: 'tool_pricing', message: 'cannot be set on creation (tools are listed once the client connects): set it with PUT' }]);
      const client = checkSchema(McpClientConfigSchema, without(body, NOT_STORED), 'MCP client');
      const id = clientId(client);
      if (!SAFE_ID.test(id)) throw invalidFields('MCP client', [{ path: client.client_id !== undefined ? 'client_id' : 'name', message: SAFE_ID_RULE }]);
      await write(service, 'MCP client', (draft, ctx) => {
        const list = draftClients(draft);
        if (list.some((c) => clientId(c) === id)) throw conflict(`MCP client '${id}' already exists`, 'client_id');
        if (list.some((c) => c.name === client.name)) throw conflict(`an MCP client named '${client.name}' already exists`, 'name');
        list.push(client);
        ctx.alias(`mcp.client_configs[${list.length - 1}]`, '');
      });
      await answer(res, 200, 'MCP client added successfully', id);
    })
    .all(methodNotAllowed);

  router
    .route('/client/:id')
    .get(async (req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      const c = find(id);
      reply(res, 200, view(service, service.document(), c, mcp.byId(id)));
    })
    .put(async (req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      const body = objectBody(req.body, 'MCP client');
      if (body.client_id !== undefined && body.client_id !== id) throw invalidFields('MCP client', [{ path: 'client_id', message: 'cannot be changed (delete and create instead)' }]);
      const vkConfigs = body.vk_configs === undefined ? undefined : checkVkConfigs(body.vk_configs);
      await write(service, 'MCP client', (draft, ctx) => {
        const list = draftClients(draft);
        const index = list.findIndex((c) => clientId(c) === id);
        if (index < 0) throw notFound('MCP client', id);
        const stored = list[index];
        const merged = unmask(mergePatch(stored as Record<string, unknown>, without(body, NOT_STORED)), stored) as Record<string, unknown>;
        unmaskEnvs(merged, stored);
        // The id stays what it was, even when it was the name and the name changes.
        merged.client_id = id;
        const next = checkSchema(McpClientConfigSchema, merged, 'MCP client');
        if (list.some((c, i) => i !== index && c.name === next.name)) throw conflict(`an MCP client named '${next.name}' already exists`, 'name');
        list[index] = next;
        ctx.alias(`mcp.client_configs[${index}]`, '');
        if (vkConfigs) assignVirtualKeys(draft, stored, next, vkConfigs);
      });
      await answer(res, 200, 'MCP client updated successfully', id);
    })
    .delete(async (req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      await write(service, 'MCP client', (draft) => {
        const list = draftClients(draft);
        const index = list.findIndex((c) => clientId(c) === id);
        if (index < 0) throw notFound('MCP client', id);
        const [removed] = list.splice(index, 1);
        // A key's entry for a client that no longer exists would silently apply to a new one of the same name.
        assignVirtualKeys(draft, removed, undefined, []);
      });
      reply(res, 200, { status: 'success', message: 'MCP client removed successfully' });
    })
    .all(methodNotAllowed);

  return router;
}

/** Replaces every virtual key's entry for the client (`before`) by `entries` (for `after`). */
function assignVirtualKeys(draft: GatewayConfig, before: McpClientConfig, after: McpClientConfig | undefined, entries: { virtual_key_id: string; tools_to_execute: string[] }[]): void {
  const vks = governanceOf(draft).virtual_keys ?? [];
  entries.forEach((e, i) => {
    if (!vks.some((vk) => vk.id === e.virtual_key_id)) throw invalidFields('MCP client', [{ path: `vk_configs[${i}].virtual_key_id`, message: `virtual key '${e.virtual_key_id}' not found` }]);
  });
  for (const vk of vks) {
    const kept = ((vk.mcp_configs ?? []) as VkEntry[]).filter((m) => !(m?.mcp_client_name === before.name || (m?.mcp_client_id !== undefined && String(m.mcp_client_id) === clientId(before))));
    const mine = after ? entries.filter((e) => e.virtual_key_id === vk.id).map((e) => ({ mcp_client_name: after.name, tools_to_execute: e.tools_to_execute })) : [];
    const next = [...kept, ...mine];
    if (next.length > 0 || vk.mcp_configs !== undefined) vk.mcp_configs = next;
  }
}

/** POST /api/mcp/client/{id}/reconnect: not a configuration change (also allowed when Kubernetes owns the document). */
export function mcpReconnect(mcp: McpManager, service: ConfigService) {
  return async (req: Request, res: Response): Promise<void> => {
    const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
    mcp.apply(service.current());
    const conn = mcp.byId(id);
    if (!conn) throw notFound('MCP client', id);
    await conn.reconnect();
    const doc = service.document();
    const c = sectionClients(doc).find((x) => clientId(x) === id);
    const body = { status: 'success', message: conn.state === 'connected' ? 'MCP client reconnected successfully' : `MCP client reconnect failed: ${conn.lastError ?? conn.state}`, ...(c && { client: view(service, doc, c, conn) }) };
    reply(res, conn.state === 'connected' ? 200 : 502, conn.state === 'connected' ? body : { error: { message: body.message, type: 'mcp_connection_error' }, client: body.client });
  };
}

function list(req: Request, name: string): string[] | undefined {
  const v = queryParam(req, name);
  return v === undefined || v === '' ? undefined : v.split(',').map((s) => s.trim());
}

function num(req: Request, name: string): number | undefined {
  const v = queryParam(req, name);
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new GatewayError(400, `${name} must be a number`, { param: name, code: 'invalid_field' });
  return n;
}

function time(req: Request, name: string): number | undefined {
  const v = queryParam(req, name);
  if (v === undefined || v === '') return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new GatewayError(400, `${name} must be an RFC 3339 time`, { param: name, code: 'invalid_field' });
  return t;
}

/**
 * /api/mcp-logs, /stats, /filterdata: the tool call records, from the request-log store when one is
 * configured (every replica's calls), else this replica's newest, kept in memory.
 */
export function mcpLogsRouter(mcp: McpManager): Router {
  const router = Router();
  const filter = (req: Request): McpLogFilter => {
    const f: McpLogFilter = {};
    const set = <K extends keyof McpLogFilter>(k: K, v: McpLogFilter[K] | undefined) => {
      if (v !== undefined) f[k] = v;
    };
    set('tool_names', list(req, 'tool_names'));
    set('server_labels', list(req, 'server_labels'));
    set('status', list(req, 'status'));
    set('virtual_key_ids', list(req, 'virtual_key_ids'));
    set('llm_request_ids', list(req, 'llm_request_ids'));
    set('start', time(req, 'start_time'));
    set('end', time(req, 'end_time'));
    set('min_latency', num(req, 'min_latency'));
    set('max_latency', num(req, 'max_latency'));
    set('content_search', queryParam(req, 'content_search'));
    return f;
  };
  router.get('/', async (req: Request, res: Response) => {
    const limit = Math.min(Math.max(Math.trunc(num(req, 'limit') ?? 50), 1), 1000);
    const offset = Math.max(Math.trunc(num(req, 'offset') ?? 0), 0);
    const sortBy = queryParam(req, 'sort_by') ?? 'timestamp';
    const order = queryParam(req, 'order') ?? 'desc';
    if (sortBy !== 'timestamp' && sortBy !== 'latency' && sortBy !== 'cost') throw new GatewayError(400, 'sort_by must be timestamp, latency or cost', { param: 'sort_by', code: 'invalid_field' });
    if (order !== 'asc' && order !== 'desc') throw new GatewayError(400, 'order must be asc or desc', { param: 'order', code: 'invalid_field' });
    const f = filter(req);
    const page: McpLogPage = { limit, offset, sortBy, order };
    const [found, summary, hasLogs] = await Promise.all([mcp.calls.search(f, page), mcp.calls.stats(f), mcp.calls.hasLogs()]);
    const logs = found.records.map((r) => ({
      id: r.id,
      ...(r.request_id !== undefined && { llm_request_id: r.request_id }),
      timestamp: r.timestamp,
      tool_name: r.tool,
      server_label: r.client,
      ...(r.virtual_key_id !== undefined && { virtual_key_id: r.virtual_key_id }),
      arguments: r.arguments,
      ...(r.result !== undefined && { result: { text: r.result } }),
      ...(r.error !== undefined && { error_details: { error: { message: r.error } } }),
      latency: r.latency_ms,
      cost: r.cost,
      status: r.status,
      source: r.source,
    }));
    reply(res, 200, { logs, pagination: { limit, offset, sort_by: sortBy, order, total_count: found.total }, stats: summary, has_logs: hasLogs });
  });
  router.get('/stats', async (req: Request, res: Response) => reply(res, 200, await mcp.calls.stats(filter(req))));
  router.get('/filterdata', async (_req: Request, res: Response) => {
    const d = await mcp.calls.filterData();
    reply(res, 200, { tool_names: d.tool_names, server_labels: d.server_labels, virtual_keys: d.virtual_key_ids.map((id) => ({ id })) });
  });
  return router;
}
