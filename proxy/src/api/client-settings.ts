// The client settings /api/config can change, for the dashboard's Settings page: each with its
// default, its value as stored, who owns it, when a change applies and one line on what it opens or
// costs. Type, bounds and description come from the schema (ClientConfigSchema); this file adds
// only what the schema cannot say. Settings of features not built are not listed (PUT refuses them).
import type { TObject, TSchema } from '@sinclair/typebox';
import { ClientConfigSchema, UNBUILT_CLIENT_FIELDS, type ClientConfig } from '../schema/gateway.ts';
import { DEFAULTS } from '../config/snapshot.ts';
import { DEFAULT_RETENTION_DAYS } from '../logs/retention.ts';
import { asyncSettings, DEFAULT_RESULT_TTL_SECONDS } from '../async/settings.ts';
import { DEFAULT_HISTORY_RETENTION_DAYS } from '../schema/webhooks.ts';
import { DEFAULT_MAX_AGENT_DEPTH, DEFAULT_TOOL_TIMEOUT_S } from '../mcp/manager.ts';
import type { ClientSettingView } from './answers.ts';

/** When a change takes effect. */
export type Applies = ClientSettingView['applies'];

interface SettingDef {
  /** Dotted path below `client` (`async_job_config.max_attempts`). */
  path: string;
  group: string;
  default: unknown;
  /** What turning it on, raising it or listing something opens, or what it costs. */
  effect: string;
  applies: Applies;
}

const JOBS = asyncSettings({});

/** In the page's order. Defaults are the code's own constants, so the page cannot drift from them. */
const SETTINGS: readonly SettingDef[] = [
  { path: 'enable_logging', group: 'Request logs', default: true, applies: 'now', effect: 'Stores a record of every request (model, tokens, cost, and the content unless content logging is off). Turning it on takes effect at once only when a logs store was opened at start; otherwise after a restart. (In Kubernetes it is off unless the chart names a store.)' },
  { path: 'disable_content_logging', group: 'Request logs', default: false, applies: 'now', effect: 'While off, prompts and answers are stored in the logs, readable by anyone with logs:read; on keeps only the numbers.' },
  { path: 'log_retention_days', group: 'Request logs', default: DEFAULT_RETENTION_DAYS, applies: 'now', effect: 'Records older than this are deleted at the next hourly sweep: longer keeps more history and more disk. (MCP tool call logs keep the value read at start.)' },
  { path: 'logging_headers', group: 'Request logs', default: [], applies: 'now', effect: "Each header named is copied into the log record's metadata: never list credentials (authorization, cookies)." },
  { path: 'allowed_origins', group: 'Access', default: [], applies: 'now', effect: "Each origin may call /api and inference from a browser page and open the dashboard's socket; '*' lets any web page call with a virtual key." },
  { path: 'enforce_auth_on_inference', group: 'Access', default: false, applies: 'now', effect: "While off, an inference call without a virtual key is served with the gateway's own provider keys." },
  { path: 'max_request_body_size_mb', group: 'Limits', default: DEFAULTS.maxBodyMb, applies: 'now', effect: 'Larger bodies (images, audio, long prompts) are accepted; each request holds its body in memory while it is read.' },
  { path: 'compat.convert_text_to_chat', group: 'Compatibility', default: false, applies: 'now', effect: 'Text completions for providers without them are sent as chat completions (the answer is rebuilt as a text completion).' },
  { path: 'async_job_result_ttl', group: 'Async jobs', default: DEFAULT_RESULT_TTL_SECONDS, applies: 'now', effect: 'A finished job keeps its result this long: longer costs store space.' },
  { path: 'async_job_config.max_concurrent_jobs', group: 'Async jobs', default: JOBS.concurrency, applies: 'now', effect: 'Jobs one replica runs at once: more runs faster and holds more upstream connections.' },
  { path: 'async_job_config.max_pending_jobs_per_key', group: 'Async jobs', default: JOBS.maxPendingPerKey, applies: 'now', effect: 'Jobs one virtual key may have waiting; a submit over it answers 429.' },
  { path: 'async_job_config.max_pending_jobs', group: 'Async jobs', default: JOBS.maxPending, applies: 'now', effect: 'Jobs waiting in the store, all keys together; a submit over it answers 429.' },
  { path: 'async_job_config.max_stored_mb_per_key', group: 'Async jobs', default: JOBS.maxStoredBytesPerKey / 1024 / 1024, applies: 'now', effect: "Store space one virtual key's jobs may take." },
  { path: 'async_job_config.max_stored_mb', group: 'Async jobs', default: JOBS.maxStoredBytes / 1024 / 1024, applies: 'now', effect: 'Store space all live jobs may take.' },
  { path: 'async_job_config.max_result_size_mb', group: 'Async jobs', default: JOBS.maxResultBytes / 1024 / 1024, applies: 'now', effect: 'A larger answer fails its job (507) instead of filling the store.' },
  { path: 'async_job_config.max_attempts', group: 'Async jobs', default: JOBS.maxAttempts, applies: 'now', effect: 'Runs of a job cut off by a dying replica before it is failed.' },
  { path: 'async_job_config.lease_seconds', group: 'Async jobs', default: JOBS.leaseMs / 1000, applies: 'now', effect: "Shorter: a dead replica's jobs are taken over sooner, at more store writes." },
  { path: 'async_job_config.poll_interval_ms', group: 'Async jobs', default: JOBS.pollMs, applies: 'now', effect: 'Shorter: jobs start sooner, at more store reads.' },
  { path: 'async_job_config.sweep_interval_seconds', group: 'Async jobs', default: JOBS.sweepMs / 1000, applies: 'now', effect: 'How often expired results are removed.' },
  { path: 'mcp_agent_depth', group: 'MCP', default: DEFAULT_MAX_AGENT_DEPTH, applies: 'now', effect: 'Agent mode: more model turns per request, each one charged (mcp.tool_manager_config wins when set).' },
  { path: 'mcp_tool_execution_timeout', group: 'MCP', default: DEFAULT_TOOL_TIMEOUT_S, applies: 'now', effect: 'Seconds a tool call may take before it fails (mcp.tool_manager_config wins when set).' },
  { path: 'mcp_code_mode_binding_level', group: 'MCP', default: 'server', applies: 'now', effect: "Code mode's stub files: one per server, or one per tool." },
  // mcp/connection.ts syncs every '10m' when nothing says otherwise.
  { path: 'mcp_tool_sync_interval', group: 'MCP', default: 10, applies: 'now', effect: 'Minutes between tool list refreshes (0: off); each refresh calls every MCP server.' },
  { path: 'webhook_config.delivery_history_retention_days', group: 'Webhooks', default: DEFAULT_HISTORY_RETENTION_DAYS, applies: 'now', effect: 'Days of webhook delivery history kept in the store.' },
];

/** The schema of a dotted path below the client section. */
function schemaAt(path: string): TSchema {
  let node: TSchema = ClientConfigSchema;
  for (const seg of path.split('.')) node = (node as TObject).properties[seg];
  return node;
}

function valueAt(client: ClientConfig | undefined, path: string): unknown {
  let node: unknown = client;
  for (const seg of path.split('.')) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[seg] : undefined;
  return node;
}

function kindOf(s: TSchema): Pick<ClientSettingView, 'type' | 'options' | 'minimum' | 'maximum'> {
  if (Array.isArray(s.anyOf)) return { type: 'choice', options: (s.anyOf as TSchema[]).map((o) => String(o.const)) };
  if (s.type === 'boolean') return { type: 'boolean' };
  if (s.type === 'array') return { type: 'list' };
  return { type: 'integer', ...(s.minimum !== undefined && { minimum: s.minimum as number }), ...(s.maximum !== undefined && { maximum: s.maximum as number }) };
}

/**
 * Every setting with its stored value; `owner` says who set it (the top-level field's owner: a
 * field of config.json is the file's, read-only here), `default` when nobody did.
 */
export function clientSettings(client: ClientConfig | undefined, ownerOf: (field: string) => { owner: string; source?: string } | undefined): ClientSettingView[] {
  return SETTINGS.map((d) => {
    const value = valueAt(client, d.path);
    const top = d.path.split('.')[0];
    const own = valueAt(client, top) === undefined ? undefined : ownerOf(top);
    const schema = schemaAt(d.path);
    return {
      name: d.path,
      group: d.group,
      ...kindOf(schema),
      description: String(schema.description ?? ''),
      effect: d.effect,
      default: d.default,
      ...(value !== undefined && { value }),
      owner: (own?.owner ?? 'default') as ClientSettingView['owner'],
      ...(own?.source !== undefined && { source: own.source }),
      applies: d.applies,
    };
  });
}

/** Client fields PUT /api/config refuses: features not built, whose value nothing would read. */
export const UNBUILT_FIELDS: ReadonlySet<string> = new Set(UNBUILT_CLIENT_FIELDS);
