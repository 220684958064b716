// One MCP client: a connection to one MCP server through the official SDK (streamable HTTP, SSE or
// stdio), its tool list, and its honest state. A client is `connected` only once tools/list has
// answered; a failed connect or listing is `error` with the reason, and it reconnects with backoff.
// The tool list is refreshed on notifications/tools/list_changed and every tool_sync_interval.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpClientConfig } from '../schema/mcp.ts';
import { log } from '../log.ts';
import { parseDuration } from './duration.ts';
import { checkedFetch, mcpDispatcher, mcpUrlProblem } from './egress.ts';
import { maskUrlCredentials, urlSecrets } from '../upstream/egress.ts';
import { DEFAULT_MAX_TOOL_ANSWER_MB, tooLargeMessage } from './answer-cap.ts';

export type McpState = 'connecting' | 'connected' | 'disconnected' | 'error';

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

const BACKOFF_INITIAL_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
export const DEFAULT_CONNECT_TIMEOUT_S = 15;
const STDERR_TAIL = 2_000;
/** Characters of stderr quoted in a reason. */
const STDERR_QUOTED = 300;
const CLIENT_INFO = { name: 'skybridge', version: '1.0.0' };

/** The id a client is known by: client_id, else its name. */
export function clientId(c: McpClientConfig): string {
  return c.client_id ?? c.name;
}

export class McpConnection {
  config: McpClientConfig;
  state: McpState = 'connecting';
  /** Why the client is in `error` (a connect or listing failure), never a secret. */
  lastError: string | undefined = undefined;
  tools: McpTool[] = [];
  connectedAt: number | undefined = undefined;
  #client: Client | undefined;
  #closed = false;
  #attempt = 0;
  #retry: NodeJS.Timeout | undefined;
  #sync: NodeJS.Timeout | undefined;
  #stderr = '';
  /** Why a client's connection was dropped by the gateway itself (a stdio answer over the cap): its calls fail with this. */
  readonly #dropped = new WeakMap<Client, string>();
  #connecting: Promise<void> | undefined;
  /** http/sse connections, through the address check (egress.ts); closed with the client. */
  #dispatcher: ReturnType<typeof mcpDispatcher> | undefined;
  readonly #globalSync: string | undefined;
  readonly #onChange: () => void;
  readonly #maxAnswerBytes: () => number;

  constructor(config: McpClientConfig, globalSync: string | undefined, onChange: () => void, maxAnswerBytes: () => number = () => DEFAULT_MAX_TOOL_ANSWER_MB * 1024 * 1024) {
    this.config = config;
    this.#maxAnswerBytes = maxAnswerBytes;
    this.#globalSync = globalSync;
    this.#onChange = onChange;
  }

  get id(): string {
    return clientId(this.config);
  }

  get name(): string {
    return this.config.name;
  }

  /** Starts connecting (resolves once this attempt has connected or failed). */
  start(): Promise<void> {
    if (this.#connecting) return this.#connecting;
    this.#connecting = this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /** Drops the connection and connects again at once (POST /api/mcp/client/{id}/reconnect). */
  async reconnect(): Promise<void> {
    clearTimeout(this.#retry);
    this.#attempt = 0;
    await this.#disconnect();
    this.#closed = false;
    // Asked for: this attempt is reported as under way, whatever the last one did.
    this.state = 'connecting';
    await this.start();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#sync);
    await this.#disconnect();
    this.state = 'disconnected';
    const d = this.#dispatcher;
    this.#dispatcher = undefined;
    await d?.close().catch(() => undefined);
  }

  /** Calls a tool on the server; the result is the MCP CallToolResult. `meta`: the request's `_meta` (W3C trace context). */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number, meta?: Readonly<Record<string, string>>): Promise<CallResult> {
    const client = this.#client;
    if (!client || this.state !== 'connected') throw new McpUnavailable(this.name, this.state === 'error' ? this.lastError : this.state);
    try {
      const result = await client.callTool({ name: tool, arguments: args, ...(meta && { _meta: { ...meta } }) }, undefined, { signal, timeout: timeoutMs, maxTotalTimeout: timeoutMs });
      return result as CallResult;
    } catch (err) {
      // The connection was closed under this call because an answer passed the cap: say so.
      const why = this.#dropped.get(client);
      throw why ? new Error(why) : err;
    }
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    // A retry after a failure goes on reporting that failure until it connects: the status (and the
    // operator's Connected condition) must not flicker to "connecting" at every backoff step.
    if (this.state !== 'error') this.state = 'connecting';
    let client: Client | undefined;
    try {
      const sdk = await clientSdk();
      client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
      client.onclose = () => this.#lost(client!, this.#dropped.get(client!) ?? 'the connection closed');
      client.onerror = (err) => {
        // stdio: a line (one message) over the cap fails the transport before it is buffered further;
        // the SDK then closes it (the child is stopped) and the connection is made again.
        if (this.config.connection_type === 'stdio' && /ReadBuffer exceeded maximum size/.test(err.message)) {
          this.#dropped.set(client!, `${tooLargeMessage(this.#maxAnswerBytes())}; the stdio server was restarted`);
        }
        log.debug('mcp client transport error', { client: this.name, error: this.#scrub(err.message) });
      };
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => void this.refresh());
      const transport = this.#transport(sdk);
      await client.connect(transport, { timeout: this.#connectTimeoutMs() });
      this.#client = client;
      await this.#listTools(client);
      this.state = 'connected';
      this.lastError = undefined;
      this.#attempt = 0;
      this.connectedAt = Date.now();
      this.#startSync();
      log.info('mcp client connected', { client: this.name, tools: this.tools.length });
    } catch (err) {
      const reason = this.#reason(err);
      if (this.#client === client) this.#client = undefined;
      void client?.close().catch(() => undefined);
      if (this.#closed) return;
      this.#fail(reason);
    } finally {
      this.#onChange();
    }
  }

  /** tools/list again (on list_changed, on the sync interval); a failure is an error state. */
  async refresh(): Promise<void> {
    const client = this.#client;
    if (!client || this.#closed) return;
    try {
      await this.#listTools(client);
      if (this.state !== 'connected') {
        this.state = 'connected';
        this.lastError = undefined;
      }
    } catch (err) {
      if (this.#client !== client) return;
      this.#client = undefined;
      void client.close().catch(() => undefined);
      this.#fail(`tools/list failed: ${this.#reason(err)}`);
    }
    this.#onChange();
  }

  async #listTools(client: Client): Promise<void> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    // Paginated listing; a bound so a misbehaving server cannot loop us forever.
    for (let page = 0; page < 100; page++) {
      const r = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.#connectTimeoutMs() });
      for (const t of r.tools) tools.push({ name: t.name, ...(t.description !== undefined && { description: t.description }), inputSchema: t.inputSchema as Record<string, unknown> });
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    this.tools = tools;
  }

  #lost(client: Client, why: string): void {
    if (this.#client !== client || this.#closed) return;
    this.#client = undefined;
    this.#fail(why + this.#stderrTail());
    this.#onChange();
  }

  #connectTimeoutMs(): number {
    return (this.config.connect_timeout ?? DEFAULT_CONNECT_TIMEOUT_S) * 1000;
  }

  #stderrTail(): string {
    return this.config.connection_type === 'stdio' && this.#stderr.trim() ? ` (stderr: ${this.#stderr.trim().slice(-STDERR_QUOTED)})` : '';
  }

  #fail(reason: string): void {
    this.state = 'error';
    this.lastError = reason;
    this.tools = [];
    clearInterval(this.#sync);
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** this.#attempt) * (0.8 + Math.random() * 0.4);
    this.#attempt++;
    log.warn('mcp client failed: reconnecting with backoff', { client: this.name, error: reason, retry_in_ms: Math.round(delay) });
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => void this.start(), delay);
    this.#retry.unref();
  }

  #startSync(): void {
    clearInterval(this.#sync);
    const own = this.config.tool_sync_interval;
    const ms = own !== undefined && own !== '0' ? parseDuration(own) : parseDuration(this.#globalSync ?? '10m');
    if (ms === undefined || ms <= 0) return;
    this.#sync = setInterval(() => void this.refresh(), Math.max(ms, 1_000));
    this.#sync.unref();
  }

  async #disconnect(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.tools = [];
    if (client) await client.close().catch(() => undefined);
  }

  #transport(sdk: ClientSdk): Transport {
    const c = this.config;
    const headers = c.headers ?? {};
    const checked = (raw: string): { url: URL; fetch: ReturnType<typeof checkedFetch> } => {
      const url = new URL(raw);
      // Refused before the SDK starts, so the state names the reason rather than a transport error.
      const refused = mcpUrlProblem(url);
      if (refused) throw new Error(`refusing to connect to ${url.host}: ${refused}`);
      this.#dispatcher ??= mcpDispatcher();
      return { url, fetch: checkedFetch(this.#dispatcher, Object.keys(headers), this.#maxAnswerBytes) };
    };
    switch (c.connection_type) {
      case 'http': {
        const { url, fetch } = checked(c.connection_string ?? c.http_config!.url);
        return new sdk.StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch });
      }
      case 'sse': {
        const { url, fetch } = checked(c.connection_string!);
        return new sdk.SSEClientTransport(url, { requestInit: { headers }, fetch });
      }
      case 'stdio': {
        const sc = c.stdio_config!;
        this.#stderr = '';
        // maxBufferSize: what is buffered of the line being read (one message) stays under the cap.
        const t = new sdk.StdioClientTransport({ command: sc.command, args: sc.args ?? [], env: stdioEnv(sdk.getDefaultEnvironment(), sc.envs), stderr: 'pipe', maxBufferSize: this.#maxAnswerBytes() });
        // Kept short, for the error reason of a server that dies at start.
        t.stderr?.on('data', (d: Buffer) => {
          this.#stderr = (this.#stderr + d.toString('utf8')).slice(-STDERR_TAIL);
        });
        return t;
      }
      default:
        throw new Error(`connection_type ${c.connection_type} is not supported by this gateway (use http, sse or stdio)`);
    }
  }

  #reason(err: unknown): string {
    const msg = (err as Error)?.message ?? String(err);
    return this.#scrub(msg) + this.#stderrTail();
  }

  #scrub(msg: string): string {
    return scrubUrl(scrubHeaders(msg, this.config.headers), this.config.connection_string ?? this.config.http_config?.url);
  }
}

export interface CallResult {
  content?: { type: string; text?: string; [k: string]: unknown }[];
  structuredContent?: unknown;
  isError?: boolean;
}

export class McpUnavailable extends Error {
  constructor(client: string, why: string | undefined) {
    super(`MCP client '${client}' is not connected${why ? `: ${why}` : ''}`);
  }
}

/**
 * How the gateway's host reaches the network: its CA bundle and proxy. A stdio server that fetches
 * (npx -y downloading itself, a server calling an API) needs the same, or fails behind a corporate
 * proxy or TLS-inspecting CA where the gateway works.
 */
export const STDIO_NETWORK_ENV = [
  'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'NODE_USE_ENV_PROXY',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy',
] as const;

/**
 * The child's environment: the SDK's safe defaults, the gateway's CA and proxy variables
 * (STDIO_NETWORK_ENV), then the variables `envs` names (`NAME` passes the gateway's value on,
 * `NAME=value` sets one, also over a default).
 */
function stdioEnv(env: Record<string, string>, envs: readonly string[] | undefined): Record<string, string> {
  for (const name of STDIO_NETWORK_ENV) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  for (const e of envs ?? []) {
    const eq = e.indexOf('=');
    if (eq > 0) env[e.slice(0, eq)] = e.slice(eq + 1);
    else if (process.env[e] !== undefined) env[e] = process.env[e]!;
  }
  return env;
}

/** Credentials in the client's URL (userinfo, token-like query values) never reach an error message or a log line. */
function scrubUrl(msg: string, url: string | undefined): string {
  if (!url) return msg;
  let out = msg.split(url).join(maskUrlCredentials(url));
  for (const secret of urlSecrets(url)) out = out.split(secret).join('***');
  return out;
}

/** Header values (tokens) never reach an error message. */
function scrubHeaders(msg: string, headers: Readonly<Record<string, string>> | undefined): string {
  let out = msg;
  for (const v of Object.values(headers ?? {})) if (v.length >= 4) out = out.split(v).join('[redacted]');
  return out;
}

/**
 * The SDK's client side, loaded with the first connection: a gateway with no MCP client never
 * pays for it (with its schema library it is several MB of code and heap).
 */
async function loadClientSdk() {
  const [client, http, sse, stdio, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    SSEClientTransport: sse.SSEClientTransport,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

type ClientSdk = Awaited<ReturnType<typeof loadClientSdk>>;
let clientSdkLoading: Promise<ClientSdk> | undefined;
const clientSdk = (): Promise<ClientSdk> => (clientSdkLoading ??= loadClientSdk());
