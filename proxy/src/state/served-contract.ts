// What a proxy replica tells the operator about itself: one coordination.k8s.io Lease per serving
// process in the configuration namespace, labelled SERVED_REPORT_LABEL, renewed while the process
// serves, carrying this report (JSON) in the SERVED_ANNOTATION annotation. The operator counts the
// live ones (renewed within leaseDurationSeconds) to say how many replicas serve each custom
// resource. Shared by both sides through contract.ts, so the format cannot drift.

export const SERVED_REPORT_LABEL = 'skybridge.dev/served-report';
export const SERVED_REPORT_SELECTOR = `${SERVED_REPORT_LABEL}=true`;
export const SERVED_ANNOTATION = 'skybridge.dev/served';

/** Sections of the rendered document this proxy build acts on (index.json `managed` names). */
export const IMPLEMENTED_SECTIONS = ['providers', 'virtual_keys', 'budgets', 'rate_limits', 'routing_rules', 'plugins', 'mcp_clients', 'webhooks', 'teams', 'customers'] as const;

export type ServedMcpState = 'connecting' | 'connected' | 'disconnected' | 'error';

export interface ServedMcpClient {
  state: ServedMcpState;
  /** Tools listed by the server (0 unless connected). */
  tools: number;
  /** Why it is in `error`, secrets scrubbed. */
  error?: string;
}

/** A webhook whose deliveries this process gave up on lately (after their last retry). */
export interface ServedWebhook {
  /** Deliveries given up within EXHAUSTED_WINDOW_MS. */
  exhausted: number;
  /** The last one's error, secrets scrubbed. */
  error?: string;
}

/** How long a given-up delivery keeps its webhook reported: the operator's Warning stands this long. */
export const EXHAUSTED_WINDOW_MS = 10 * 60_000;

export interface ServedReport {
  /** index.json `revision` and `secretChecksum` of the document this process serves; absent before the first one. */
  revision?: string;
  secretChecksum?: string;
  /** The sections it acts on: a section it ignores (e.g. webhooks without a logs store) is not served. */
  sections: string[];
  /** MCP clients by client id. */
  mcp: Record<string, ServedMcpClient>;
  /** Why the newest rendering is not served here (rejected or incomplete), secrets scrubbed. */
  problem?: string;
  /** Webhooks by id with deliveries given up lately; absent when none. */
  webhooks?: Record<string, ServedWebhook>;
  /** Providers (by name) whose InferencePool gives this process no server to send to, and why; absent when none. */
  pools?: Record<string, ServedPool>;
}

/** A provider's InferencePool that cannot be served from (missing, unreadable, no ready server). */
export interface ServedPool {
  problem: string;
}

const MAX_ERROR = 300;
const MAX_CLIENTS = 200;

/**
 * Removes what could be a credential from an error text before it leaves the process: bearer and
 * basic tokens, user:password in URLs, secret-looking query parameters and header values, long
 * opaque strings. The MCP layer already avoids secrets in errors; this is the second fence, since
 * the report is readable by whoever can read Leases.
 */
export function scrubError(text: string): string {
  const scrubbed = text
    .replace(/\b(bearer|basic|token)\s+[^\s,;"')]+/gi, '$1 [redacted]')
    .replace(/(\/\/)[^/\s:@]+:[^/\s@]+@/g, '$1[redacted]@')
    .replace(/([?&](?:[a-z_-]*(?:key|token|secret|password|sig|signature|auth)[a-z_-]*)=)[^&\s]+/gi, '$1[redacted]')
    .replace(/((?:authorization|api[-_]?key|x-api-key|cookie)["']?\s*[:=]\s*["']?)(?!\[redacted\]|bearer\b|basic\b)[^\s,;"'&]+/gi, '$1[redacted]')
    .replace(/\b(sk|pk|rk|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{8,}/g, '[redacted]')
    .replace(/\b(?![0-9a-f]{40,}\b)[A-Za-z0-9+_-]{40,}={0,2}/g, '[redacted]'); // a hex digest (a revision) is no secret
  return scrubbed.length > MAX_ERROR ? `${scrubbed.slice(0, MAX_ERROR - 1)}…` : scrubbed;
}

export function encodeServedReport(r: ServedReport): string {
  const mcp: Record<string, ServedMcpClient> = {};
  for (const id of Object.keys(r.mcp).sort().slice(0, MAX_CLIENTS)) {
    const c = r.mcp[id];
    mcp[id] = { state: c.state, tools: c.tools, ...(c.error !== undefined ? { error: scrubError(c.error) } : {}) };
  }
  const webhooks: Record<string, ServedWebhook> = {};
  for (const id of Object.keys(r.webhooks ?? {}).sort().slice(0, MAX_CLIENTS)) {
    const w = r.webhooks![id];
    webhooks[id] = { exhausted: w.exhausted, ...(w.error !== undefined ? { error: scrubError(w.error) } : {}) };
  }
  const pools: Record<string, ServedPool> = {};
  for (const name of Object.keys(r.pools ?? {}).sort().slice(0, MAX_CLIENTS)) pools[name] = { problem: scrubError(r.pools![name].problem) };
  return JSON.stringify({
    revision: r.revision,
    secretChecksum: r.secretChecksum,
    sections: [...r.sections].sort(),
    mcp,
    ...(r.problem ? { problem: scrubError(r.problem) } : {}),
    ...(Object.keys(webhooks).length ? { webhooks } : {}),
    ...(Object.keys(pools).length ? { pools } : {}),
  });
}

const STATES = new Set<string>(['connecting', 'connected', 'disconnected', 'error']);

/** Undefined when the annotation is missing or not a report (another writer, an older format). */
export function parseServedReport(text: string | undefined): ServedReport | undefined {
  if (!text) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
  const sections = Array.isArray(o.sections) ? o.sections.filter((s): s is string => typeof s === 'string') : [];
  const mcp: Record<string, ServedMcpClient> = {};
  if (o.mcp && typeof o.mcp === 'object' && !Array.isArray(o.mcp)) {
    for (const [id, v] of Object.entries(o.mcp as Record<string, unknown>)) {
      if (!v || typeof v !== 'object') continue;
      const c = v as Record<string, unknown>;
      if (typeof c.state !== 'string' || !STATES.has(c.state)) continue;
      const tools = typeof c.tools === 'number' && Number.isInteger(c.tools) && c.tools >= 0 ? c.tools : 0;
      mcp[id] = { state: c.state as ServedMcpState, tools, ...(typeof c.error === 'string' ? { error: c.error } : {}) };
    }
  }
  const webhooks: Record<string, ServedWebhook> = {};
  if (o.webhooks && typeof o.webhooks === 'object' && !Array.isArray(o.webhooks)) {
    for (const [id, v] of Object.entries(o.webhooks as Record<string, unknown>)) {
      const w = v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
      if (!w || typeof w.exhausted !== 'number' || !Number.isInteger(w.exhausted) || w.exhausted <= 0) continue;
      webhooks[id] = { exhausted: w.exhausted, ...(typeof w.error === 'string' ? { error: w.error } : {}) };
    }
  }
  const pools: Record<string, ServedPool> = {};
  if (o.pools && typeof o.pools === 'object' && !Array.isArray(o.pools)) {
    for (const [name, v] of Object.entries(o.pools as Record<string, unknown>)) {
      const problem = v && typeof v === 'object' ? (v as Record<string, unknown>).problem : undefined;
      if (typeof problem === 'string' && problem) pools[name] = { problem };
    }
  }
  const revision = str(o.revision);
  const secretChecksum = str(o.secretChecksum);
  const problem = str(o.problem);
  return {
    ...(revision ? { revision } : {}),
    ...(secretChecksum ? { secretChecksum } : {}),
    sections,
    mcp,
    ...(problem ? { problem } : {}),
    ...(Object.keys(webhooks).length ? { webhooks } : {}),
    ...(Object.keys(pools).length ? { pools } : {}),
  };
}
