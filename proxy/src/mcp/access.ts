// Which MCP tools a caller may use. Three filters stack, as in the reference gateway, and a tool
// must pass all of them:
//   1. the client's tools_to_execute (['*'] all; [] or omitted none),
//   2. the virtual key: its mcp_configs entry for the client (tools_to_execute), else the client's
//      allow_on_all_virtual_keys; a caller without a virtual key only when the client says
//      allow_without_virtual_key (an explicit opt-in: an open gateway must not hand every anonymous
//      caller the tools, and with them agent mode),
//   3. the request headers x-bf-mcp-include-clients and x-bf-mcp-include-tools (comma-separated;
//      tools as `<client>-<tool>` or `<client>-*`; a header sent empty allows nothing).
// Every call is checked against the same decision, not only the tool list the model saw.
import type { IncomingHttpHeaders } from 'node:http';
import type { McpClientConfig } from '../schema/mcp.ts';
import { GatewayError } from '../unified/errors.ts';
import { clientId } from './connection.ts';
import { BF_HEADERS } from '../bf-headers.ts';

export const INCLUDE_CLIENTS_HEADER = BF_HEADERS.mcpIncludeClients.name;
export const INCLUDE_TOOLS_HEADER = BF_HEADERS.mcpIncludeTools.name;

/** The part of a virtual key this module reads. */
export interface VkMcpView {
  name: string;
  mcp_configs?: unknown[];
}

export type Allowed = (client: McpClientConfig, tool: string) => boolean;

/** `list` allows `tool`: ['*'] all, otherwise by name. */
export function listAllows(list: readonly string[] | undefined, tool: string): boolean {
  return list !== undefined && (list.includes('*') || list.includes(tool));
}

/** The auto-execute list allows `tool` (and the client allows it at all). */
export function autoExecutable(client: McpClientConfig, tool: string): boolean {
  return listAllows(client.tools_to_execute, tool) && listAllows(client.tools_to_auto_execute, tool);
}

function vkEntry(vk: VkMcpView, client: McpClientConfig): { tools_to_execute?: string[] } | undefined {
  for (const raw of vk.mcp_configs ?? []) {
    if (!raw || typeof raw !== 'object') continue;
    const e = raw as { mcp_client_name?: unknown; mcp_client_id?: unknown; tools_to_execute?: unknown };
    const byName = e.mcp_client_name === client.name;
    const byId = e.mcp_client_id !== undefined && String(e.mcp_client_id) === clientId(client);
    if (byName || byId) return { tools_to_execute: Array.isArray(e.tools_to_execute) ? e.tools_to_execute.filter((t): t is string => typeof t === 'string') : [] };
  }
  return undefined;
}

function headerList(headers: IncomingHttpHeaders, name: string): string[] | undefined {
  const raw = headers[name];
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The caller's decision: client config, virtual key, request headers. */
export function callerAccess(vk: VkMcpView | undefined, headers: IncomingHttpHeaders): Allowed {
  const clients = headerList(headers, INCLUDE_CLIENTS_HEADER);
  const tools = headerList(headers, INCLUDE_TOOLS_HEADER);
  return (client, tool) => {
    if (!listAllows(client.tools_to_execute, tool)) return false;
    if (vk) {
      const entry = vkEntry(vk, client);
      if (entry ? !listAllows(entry.tools_to_execute, tool) : client.allow_on_all_virtual_keys !== true) return false;
    } else if (client.allow_without_virtual_key !== true) {
      return false;
    }
    if (clients && !clients.includes(client.name) && !clients.includes('*')) return false;
    if (tools && !tools.some((t) => t === '*' || t === `${client.name}-${tool}` || t === `${client.name}-*` || t === `${client.name}/${tool}` || t === `${client.name}/*`)) return false;
    return true;
  };
}

/** Some client lets callers without a virtual key use its tools (allow_without_virtual_key). */
export function anonymousAllowed(clients: readonly McpClientConfig[] | undefined): boolean {
  return (clients ?? []).some((c) => c.allow_without_virtual_key === true);
}

/**
 * The one authentication rule of the routes that run tools for a caller (/mcp and
 * /v1/mcp/tool/execute): a virtual key, or none only while some client opts in to such callers.
 */
export function requireMcpCaller(clients: readonly McpClientConfig[] | undefined, vk: unknown, route: string): void {
  if (vk || anonymousAllowed(clients)) return;
  throw new GatewayError(401, `a virtual key is required on ${route}: send it in x-bf-vk (or as a Bearer token)`, { type: 'authentication_error' });
}
