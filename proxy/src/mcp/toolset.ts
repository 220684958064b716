// The MCP tools one caller may use, for one request: the function tools to show the model (direct
// tools as `<client>-<tool>`, code-mode clients behind the four meta-tools), and how to run a call
// by the name the model used. Every call is checked again against the caller's access and the
// client's tools_to_execute, whatever list the model was shown.
import { codeModePreflight, codeModeTools, runCodeModeTool, type ToolHost } from './code-mode/index.ts';
import { autoExecutable, type Allowed } from './access.ts';
import type { McpManager, CallMeta, ToolOutcome } from './manager.ts';
import { chatTool, type ChatFunctionTool } from './tools.ts';
import { log } from '../log.ts';
import { MAX_JSON_DEPTH, depthOf, unsafeJson } from '../schema/names.ts';
import { logPrint } from './code-mode/print-log.ts';

/** Meta-tools that only read the stubs: always safe to run unattended (spec rule 7). */
const READ_ONLY_META = new Set(['listToolFiles', 'readToolFile', 'getToolDocs']);
const EXECUTE_CODE = 'executeToolCode';

export class ToolSet {
  readonly tools: ChatFunctionTool[] = [];
  readonly #direct = new Map<string, { client: string; tool: string }>();
  readonly #meta = new Set<string>();
  readonly #mcp: McpManager;
  readonly #allowed: Allowed;
  readonly #callMeta: CallMeta;
  readonly host: ToolHost;

  constructor(mcp: McpManager, allowed: Allowed, meta: CallMeta) {
    this.#mcp = mcp;
    this.#allowed = allowed;
    this.#callMeta = meta;
    const { direct, codeMode } = mcp.available(allowed);
    for (const { conn, tool } of direct) {
      const t = chatTool(conn.name, tool);
      if (!t) continue;
      this.tools.push(t);
      this.#direct.set(t.function.name, { client: conn.name, tool: tool.name });
    }
    this.host = {
      servers: () =>
        codeMode.map((c) => ({ name: c.name, tools: c.tools.filter((t) => allowed(c.config, t.name)).map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), inputSchema: t.inputSchema })) })),
      call: async (server, tool, args, signal) => {
        const conn = mcp.byName(server);
        if (!conn || !conn.config.is_code_mode_client) throw new Error(`unknown server '${server}'`);
        if (!allowed(conn.config, tool)) throw new Error(`tool '${tool}' of '${server}' is not allowed`);
        const out = await mcp.call(conn, tool, args, signal, { ...meta, source: 'code_mode' });
        if (out.isError) throw new Error(out.content);
        return parseResult(out.content);
      },
    };
    if (codeMode.length > 0) {
      try {
        for (const t of codeModeTools(this.host, mcp.settings().bindingLevel)) {
          this.tools.push({ type: 'function', function: { name: t.function.name, description: t.function.description, parameters: t.function.parameters as Record<string, unknown> } });
          this.#meta.add(t.function.name);
        }
      } catch (err) {
        log.warn('code mode tools are unavailable', { error: (err as Error).message });
      }
    }
  }

  get empty(): boolean {
    return this.tools.length === 0;
  }

  /** The name is one of this set's tools (an MCP tool or a meta-tool). */
  has(name: string): boolean {
    return this.#direct.has(name) || this.#meta.has(name);
  }

  /** Whether agent mode may run this call without asking the application (tools_to_auto_execute). */
  autoExecutable(name: string, argsJson: string): boolean {
    const d = this.#direct.get(name);
    if (d) {
      const conn = this.#mcp.byName(d.client);
      return conn !== undefined && autoExecutable(conn.config, d.tool);
    }
    if (!this.#meta.has(name)) return false;
    if (READ_ONLY_META.has(name)) return true;
    if (name !== EXECUTE_CODE) return false;
    const code = parseArgs(argsJson)?.code;
    if (typeof code !== 'string') return false;
    try {
      return codeModePreflight(code, (server, tool) => this.#autoFor(server, tool));
    } catch {
      return false;
    }
  }

  #autoFor(server: string, tool: string): boolean {
    const conn = this.#mcp.byName(server);
    return conn !== undefined && this.#allowed(conn.config, tool) && autoExecutable(conn.config, tool);
  }

  /**
   * Runs one call. `unattended`: agent mode (code may call only tools_to_auto_execute); otherwise
   * the application asked for it (tools_to_execute and the caller's access still apply).
   */
  async run(name: string, argsJson: string, signal: AbortSignal, unattended: boolean): Promise<ToolOutcome> {
    const args = parseArgs(argsJson);
    if (!args) return { content: `the arguments of tool '${name}' are not a JSON object`, isError: true };
    // A model's arguments are not checked by any body parser: the same bound as for request bodies.
    if (depthOf(args) > MAX_JSON_DEPTH) return { content: `the arguments of tool '${name}' are nested deeper than ${MAX_JSON_DEPTH} levels`, isError: true };
    // The rule request bodies follow (http/body.ts): a model's tool call may not carry one either.
    const unsafe = unsafeJson(args, 'arguments');
    if (unsafe) return { content: `the arguments of tool '${name}' are refused: ${unsafe.path}: ${unsafe.message}`, isError: true };
    const d = this.#direct.get(name);
    if (d) {
      const conn = this.#mcp.byName(d.client);
      if (!conn) return { content: `MCP client '${d.client}' is gone`, isError: true };
      if (unattended && !autoExecutable(conn.config, d.tool)) return { content: `tool '${name}' is not allowed to run unattended`, isError: true };
      return this.#mcp.call(conn, d.tool, args, signal, this.#callMeta);
    }
    if (this.#meta.has(name)) {
      const settings = this.#mcp.settings();
      try {
        const r = await runCodeModeTool(name, args, this.host, {
          bindingLevel: settings.bindingLevel,
          unattended,
          autoExecute: (server, tool) => this.#autoFor(server, tool),
          allowed: (server, tool) => {
            const conn = this.#mcp.byName(server);
            return conn !== undefined && conn.config.is_code_mode_client === true && this.#allowed(conn.config, tool);
          },
          timeoutMs: settings.timeoutMs,
          log: (line) => logPrint(this.#callMeta.vk ?? 'anonymous', line),
        });
        return { content: r.content, isError: r.isError === true };
      } catch (err) {
        return { content: `code mode failed: ${(err as Error).message}`, isError: true };
      }
    }
    return { content: `tool '${name}' is not an MCP tool this caller may use`, isError: true };
  }
}

function parseArgs(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A tool's text answer as a value for code: JSON when it is JSON, else `{text}`. */
function parseResult(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}
