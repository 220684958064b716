// Webhook, MCPClient and CachePolicy CRs -> their config.json resources, checked with the proxy's
// own schemas for them (schema/webhooks.ts, schema/mcp.ts, schema/cache.ts).
import { type FieldError, validator, WebhookEndpointSchema, McpClientConfigSchema, SEMANTIC_CACHE_PLUGIN, SemanticCachePluginSchema } from '../../../proxy/src/contract.ts';
import type { CustomResource, Fragment } from './kinds.ts';

/** Turns a `valueFrom` at spec path `at` into the `env.<KEY>` reference standing for it. */
export type UseSecret = (at: string, valueFrom: unknown, field: string) => string;

export type ExtensionResult = { fragments: Fragment[] } | { errors: FieldError[] };

const checkWebhook = validator(WebhookEndpointSchema);
const checkMcpClient = validator(McpClientConfigSchema);
const checkCachePlugin = validator(SemanticCachePluginSchema);

export function translateExtension(cr: CustomResource, spec: Record<string, unknown>, useSecret: UseSecret): ExtensionResult {
  switch (cr.kind) {
    case 'Webhook':
      return webhook(cr, spec, useSecret);
    case 'MCPClient':
      return mcpClient(cr, spec, useSecret);
    case 'CachePolicy':
      return cachePolicy(spec);
    default:
      return { errors: [{ path: '(root)', message: `kind ${cr.kind} is not rendered by this operator` }] };
  }
}

function webhook(cr: CustomResource, spec: Record<string, unknown>, useSecret: UseSecret): ExtensionResult {
  const { secretFrom, ...rest } = spec;
  const errors: FieldError[] = [];
  if (rest.secret !== undefined) errors.push({ path: 'secret', message: 'secret material is never a field: use secretFrom.secretKeyRef' });
  const endpoint: Record<string, unknown> = { ...rest, name: rest.name ?? cr.metadata.name };
  if (secretFrom !== undefined) endpoint.secret = useSecret('secretFrom', secretFrom, 'secret');
  const checked = checkWebhook(endpoint);
  if (Array.isArray(checked)) errors.push(...checked);
  if (errors.length) return { errors };
  return { fragments: [{ section: 'webhooks', id: endpoint.name as string, value: endpoint }] };
}

function mcpClient(cr: CustomResource, spec: Record<string, unknown>, useSecret: UseSecret): ExtensionResult {
  const { headersFrom, ...rest } = spec;
  const client: Record<string, unknown> = { ...rest, client_id: rest.client_id ?? cr.metadata.name, name: rest.name ?? cr.metadata.name };
  // Auth headers are secrets: `headersFrom: {Header-Name: {secretKeyRef}}` merged into `headers`.
  if (headersFrom !== undefined && typeof headersFrom === 'object' && headersFrom !== null && !Array.isArray(headersFrom)) {
    const headers: Record<string, unknown> = { ...((rest.headers as Record<string, unknown> | undefined) ?? {}) };
    for (const [name, ref] of Object.entries(headersFrom)) headers[name] = useSecret(`headersFrom.${name}`, { secretKeyRef: (ref as { secretKeyRef?: unknown })?.secretKeyRef }, `header_${name}`);
    client.headers = headers;
  }
  const checked = checkMcpClient(client);
  if (Array.isArray(checked)) return { errors: checked };
  return { fragments: [{ section: 'mcp_clients', id: client.client_id as string, value: client }] };
}

/** The semantic cache is one plugin: a second CachePolicy conflicts on its id. */
function cachePolicy(spec: Record<string, unknown>): ExtensionResult {
  const { enabled = true, placement, order, ...config } = spec;
  const plugin: Record<string, unknown> = { name: SEMANTIC_CACHE_PLUGIN, enabled, config, ...(placement !== undefined ? { placement } : {}), ...(order !== undefined ? { order } : {}) };
  const checked = checkCachePlugin(plugin);
  if (Array.isArray(checked)) return { errors: checked.map((e) => ({ path: e.path.replace(/^config\.?/, ''), message: e.message })) };
  return { fragments: [{ section: 'plugins', id: SEMANTIC_CACHE_PLUGIN, value: plugin }] };
}
