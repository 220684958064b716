// The MCP clients of one gateway (one per services object). Every snapshot's `mcp.client_configs`
// is reconciled by client id: new ones connect, removed ones close, changed ones reconnect, and
// unchanged ones keep their connection. Each replica follows its own snapshots, so every replica
// serves the same clients, and a client in error keeps retrying on each (no sticky failure).
import type { Snapshot } from '../config/snapshot.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { InProcessOrigin } from '../pipeline/context.ts';
import type { McpClientConfig, McpSection } from '../schema/mcp.ts';
import type { ClientConfig } from '../schema/gateway.ts';
import { log } from '../log.ts';
import { McpConnection, McpUnavailable, clientId, type CallResult, type McpTool } from './connection.ts';
import type { Allowed } from './access.ts';
import { DEFAULT_MAX_TOOL_ANSWER_MB } from './answer-cap.ts';
import { MemoryMcpCallLog, type McpCallStore, type NewMcpCall } from './call-log.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    /** The MCP clients (tools in inference, agent mode, /mcp). */
    mcp?: McpManager;
  }
}

export const DEFAULT_TOOL_TIMEOUT_S = 30;
export const DEFAULT_MAX_AGENT_DEPTH = 10;

export interface McpSettings {
  timeoutMs: number;
  maxDepth: number;
  bindingLevel: 'server' | 'tool';
  /** Bytes one message from an MCP server may weigh (answer-cap.ts). */
  maxAnswerBytes: number;
}

/** What one tool call produced, as text for a tool message. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** Why it is an error: the tool said so, the client is not connected, the call timed out or failed. */
  failure?: 'tool_error' | 'unavailable' | 'timeout' | 'failed';
}

/** One agent turn, run through the whole pipeline (operations/execute.ts `execute`, wired by gateway.ts). */
export interface TurnRequest extends InProcessOrigin {
  operation: 'chat' | 'responses';
  body: unknown;
}
/** What a turn runs on behalf of: the agent request (its id, its totals, its caller). */
export type TurnOrigin = Pick<TurnRequest, 'parentRequestId' | 'requestId' | 'turnOf' | 'caller'>;
export type TurnRunner = (snapshot: Snapshot, request: TurnRequest) => Promise<Outcome>;

/** The caller's budgets and rate limits for tool calls (built by governance.ts). */
export interface ToolGovernance {
  /** Admits one direct call: throws the 429 / 402 GatewayError when a limit is full. */
  admit(): Promise<void>;
  /** Adds a successful call's cost (USD) to the budgets. */
  charge(cost: number): void;
}

export interface CallMeta {
  /** Who asked: `chat`, `responses`, `execute`, `mcp_server`, `code_mode`. */
  source: string;
  vk?: string;
  requestId?: string;
  /** The caller's budgets, charged with each successful call's tool_pricing (governance.ts). */
  governance?: ToolGovernance;
}

/**
 * Watches each tool call, told by the gateway (metrics count and time it, tracing gives it a span);
 * declared here so MCP names neither module. Undefined: this call is not watched.
 */
export type ToolCallWatcher = (call: { client: string; tool: string; requestId: string | undefined }) => ToolCallWatch | undefined;

export interface ToolCallWatch {
  /** Sent as the call's `_meta` (W3C trace context: traceparent, tracestate). */
  readonly meta: Readonly<Record<string, string>> | undefined;
  /** `failure`: tool_error, timeout, unavailable or failed; none: success. */
  end(outcome: { isError: boolean; failure?: string }, seconds: number): void;
}

/** The watches' `_meta` for the call, merged (undefined when none has any). */
function callMeta(watches: readonly ToolCallWatch[]): Readonly<Record<string, string>> | undefined {
  let meta: Record<string, string> | undefined;
  for (const w of watches) if (w.meta) meta = meta ? { ...meta, ...w.meta } : { ...w.meta };
  return meta;
}

export class McpManager {
  readonly #connections = new Map<string, McpConnection>();
  #section: McpSection | undefined = undefined;
  #client: ClientConfig | undefined = undefined;
  #applied: unknown = Symbol('none');
  #everApplied = false;
  /** Tool call records: the request-log store's when there is one (gateway.ts), else this process's memory. */
  calls: McpCallStore;
  /** Told after each connect attempt or tool listing of a client (the dashboard's mcp_client_state). */
  onChange: ((conn: McpConnection) => void) | undefined;
  /** Runs agent turns; without it, agent mode is off (tools are still added). */
  runTurn: TurnRunner | undefined;
  /** Told of each tool call, in order. */
  readonly watchers: readonly ToolCallWatcher[];

  constructor(hooks: { calls?: McpCallStore; onChange?: (conn: McpConnection) => void; runTurn?: TurnRunner; watchers?: readonly ToolCallWatcher[] } = {}) {
    this.calls = hooks.calls ?? new MemoryMcpCallLog();
    this.onChange = hooks.onChange;
    this.runTurn = hooks.runTurn;
    this.watchers = hooks.watchers ?? [];
  }

  /** Set once any snapshot was applied. */
  get applied(): boolean {
    return this.#everApplied;
  }

  /**
   * Reconciles the clients with the snapshot (cheap when its mcp section did not change). Called
   * with each new snapshot as it is swapped in (gateway.ts), never with an older one: that would
   * roll the clients back.
   */
  apply(snapshot: Snapshot): void {
    this.#everApplied = true;
    const section = snapshot.config.mcp;
    if (section === this.#applied) return;
    this.#applied = section;
    this.#section = section;
    this.#client = snapshot.config.client;
    const globalSync = section?.tool_sync_interval ?? (this.#client?.mcp_tool_sync_interval !== undefined ? `${this.#client.mcp_tool_sync_interval}m` : undefined);
    const wanted = new Map<string, McpClientConfig>();
    for (const c of section?.client_configs ?? []) wanted.set(clientId(c), c);
    for (const [id, conn] of this.#connections) {
      const next = wanted.get(id);
      if (!next || !sameConfig(conn.config, next)) {
        this.#connections.delete(id);
        void conn.close();
        if (!next) log.info('mcp client removed', { client: conn.name });
      } else {
        conn.config = next;
      }
    }
    for (const [id, c] of wanted) {
      if (this.#connections.has(id)) continue;
      const conn: McpConnection = new McpConnection(c, globalSync, () => this.onChange?.(conn), () => this.settings().maxAnswerBytes);
      this.#connections.set(id, conn);
      void conn.start();
    }
  }

  settings(): McpSettings {
    const tm = this.#section?.tool_manager_config;
    const client = this.#client;
    return {
      timeoutMs: (tm?.tool_execution_timeout ?? client?.mcp_tool_execution_timeout ?? DEFAULT_TOOL_TIMEOUT_S) * 1000,
      maxDepth: tm?.max_agent_depth ?? client?.mcp_agent_depth ?? DEFAULT_MAX_AGENT_DEPTH,
      bindingLevel: tm?.code_mode_binding_level ?? client?.mcp_code_mode_binding_level ?? 'server',
      maxAnswerBytes: (tm?.max_tool_answer_mb ?? DEFAULT_MAX_TOOL_ANSWER_MB) * 1024 * 1024,
    };
  }

  list(): McpConnection[] {
    return [...this.#connections.values()];
  }

  byId(id: string): McpConnection | undefined {
    return this.#connections.get(id);
  }

  byName(name: string): McpConnection | undefined {
    for (const c of this.#connections.values()) if (c.name === name) return c;
    return undefined;
  }

  /** Settles once every client has finished its current connect attempt (tests, start-up). */
  async ready(): Promise<void> {
    await Promise.all(this.list().map((c) => (c.state === 'connecting' ? c.start() : undefined)));
  }

  /** `<client>-<tool>` → the client and the tool name (the longest client name that prefixes it). */
  resolve(name: string): { conn: McpConnection; tool: string } | undefined {
    let best: McpConnection | undefined;
    for (const c of this.#connections.values()) {
      if (name.startsWith(`${c.name}-`) && (!best || c.name.length > best.name.length)) best = c;
    }
    return best && { conn: best, tool: name.slice(best.name.length + 1) };
  }

  /** The connected tools the caller may use: direct ones, and code-mode clients apart. */
  available(allowed: Allowed): { direct: { conn: McpConnection; tool: McpTool }[]; codeMode: McpConnection[] } {
    const direct: { conn: McpConnection; tool: McpTool }[] = [];
    const codeMode: McpConnection[] = [];
    for (const conn of this.#connections.values()) {
      if (conn.state !== 'connected') continue;
      const tools = conn.tools.filter((t) => allowed(conn.config, t.name));
      if (tools.length === 0) continue;
      if (conn.config.is_code_mode_client) codeMode.push(conn);
      else for (const tool of tools) direct.push({ conn, tool });
    }
    return { direct, codeMode };
  }

  /**
   * Runs one tool call with the tool execution timeout; the caller has checked that it is allowed.
   * A tool's own error (isError) and a failed call both come back as an error outcome, logged.
   */
  async call(conn: McpConnection, tool: string, args: Record<string, unknown>, signal: AbortSignal, meta: CallMeta): Promise<ToolOutcome> {
    const started = Date.now();
    const { timeoutMs } = this.settings();
    let outcome: ToolOutcome;
    const cost = conn.config.tool_pricing?.[tool] ?? 0;
    const watches = this.#watch({ client: conn.name, tool, requestId: meta.requestId });
    try {
      const result = await conn.call(tool, args, signal, timeoutMs, callMeta(watches));
      outcome = { content: resultText(result), isError: result.isError === true, ...(result.isError === true && { failure: 'tool_error' as const }) };
    } catch (err) {
      const msg = (err as Error)?.message ?? String(err);
      if (err instanceof McpUnavailable) outcome = { content: msg, isError: true, failure: 'unavailable' };
      else if (/timed out|timeout/i.test(msg)) outcome = { content: `tool '${tool}' of MCP client '${conn.name}' timed out after ${timeoutMs / 1000} s`, isError: true, failure: 'timeout' };
      else outcome = { content: `tool '${tool}' of MCP client '${conn.name}' failed: ${msg}`, isError: true, failure: 'failed' };
    }
    const seconds = (Date.now() - started) / 1000;
    for (const w of watches) w.end(outcome, seconds);
    this.calls.add({
      client: conn.name,
      tool,
      arguments: args,
      status: outcome.isError ? 'error' : 'success',
      ...(outcome.isError ? { error: outcome.content.slice(0, 2000) } : { result: outcome.content.slice(0, 4000) }),
      latency_ms: Date.now() - started,
      cost: outcome.isError ? 0 : cost,
      source: meta.source,
      ...(meta.vk !== undefined && { virtual_key_id: meta.vk }),
      ...(meta.requestId !== undefined && { request_id: meta.requestId }),
    } satisfies NewMcpCall);
    if (!outcome.isError) meta.governance?.charge(cost);
    return outcome;
  }

  #watch(call: Parameters<ToolCallWatcher>[0]): ToolCallWatch[] {
    const watches: ToolCallWatch[] = [];
    for (const watcher of this.watchers) {
      const w = watcher(call);
      if (w) watches.push(w);
    }
    return watches;
  }

  async close(): Promise<void> {
    const all = this.list();
    this.#connections.clear();
    this.#applied = Symbol('closed');
    await Promise.all([...all.map((c) => c.close()), this.calls.flush().catch(() => undefined)]);
  }
}

/** What the connection is made of: a change elsewhere (tool lists, names) keeps the connection. */
const CONNECTION_FIELDS = ['connection_type', 'connection_string', 'http_config', 'stdio_config', 'websocket_config', 'headers', 'auth_type', 'tool_sync_interval'] as const;

function sameConfig(a: McpClientConfig, b: McpClientConfig): boolean {
  return CONNECTION_FIELDS.every((f) => JSON.stringify(a[f]) === JSON.stringify(b[f]));
}

/** A CallToolResult as the text of a tool message: text parts joined, anything else as JSON. */
export function resultText(r: CallResult): string {
  const parts = (r.content ?? []).map((c) => (c.type === 'text' && typeof c.text === 'string' ? c.text : JSON.stringify(c)));
  if (parts.length === 0 && r.structuredContent !== undefined) return JSON.stringify(r.structuredContent);
  return parts.join('\n');
}
