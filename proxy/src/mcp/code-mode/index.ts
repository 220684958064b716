// Code mode: the four meta-tools (listToolFiles, readToolFile, getToolDocs, executeToolCode) that
// stand in for the tools of code-mode MCP clients, and the Starlark sandbox that runs the code.
import { DEFAULT_LIMITS, runStarlark, type SandboxLimits } from './sandbox.ts';
import { catalog, toolDocs, toolFiles, type CatalogServer } from './stubs.ts';
import { preflight } from './preflight.ts';

export { prewarm, DEFAULT_LIMITS, type SandboxLimits } from './sandbox.ts';

/** What code mode needs from the MCP layer: the code-mode servers' tools, and a way to call one. */
export interface ToolHost {
  servers(): { name: string; tools: { name: string; description?: string; inputSchema: unknown }[] }[];
  call(server: string, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

export type CodeModeFunctionTool = { type: 'function'; function: { name: string; description: string; parameters: unknown } };

export interface CodeModeRunOptions {
  bindingLevel: 'server' | 'tool';
  /** The gateway runs the code on its own (agent mode): every tool call must also pass autoExecute. */
  unattended: boolean;
  /** tools_to_auto_execute. */
  autoExecute: (server: string, tool: string) => boolean;
  /** tools_to_execute: checked for every call, attended or not. */
  allowed: (server: string, tool: string) => boolean;
  /** tool_execution_timeout, for the whole execution. */
  timeoutMs: number;
  /** Receives print() output, one line per call. */
  log: (line: string) => void;
  /** Sandbox limits; DEFAULT_LIMITS where absent. */
  limits?: Partial<SandboxLimits>;
}

export const CODE_MODE_TOOL_NAMES = ['listToolFiles', 'readToolFile', 'getToolDocs', 'executeToolCode'] as const;

export function isCodeModeTool(name: string): boolean {
  return (CODE_MODE_TOOL_NAMES as readonly string[]).includes(name);
}

function serverList(servers: CatalogServer[]): string {
  return servers.length ? servers.map((s) => s.global).join(', ') : '(none)';
}

/** The four meta-tools as OpenAI function tools. */
export function codeModeTools(host: ToolHost, bindingLevel: 'server' | 'tool'): CodeModeFunctionTool[] {
  const servers = remember(catalog(host.servers()));
  const example = bindingLevel === 'server' ? 'servers/<server>.pyi' : 'servers/<server>/<tool>.pyi';
  const fn = (name: string, description: string, parameters: unknown): CodeModeFunctionTool => ({
    type: 'function',
    function: { name, description, parameters },
  });
  return [
    fn(
      'listToolFiles',
      `List the .pyi stub files (${example}) that describe the tools of the code-mode servers. Read them with readToolFile, then call the tools from code with executeToolCode.`,
      { type: 'object', properties: {}, additionalProperties: false },
    ),
    fn(
      'readToolFile',
      'Read a .pyi stub file from listToolFiles: compact Python signatures with one-line comments. Optionally only lines startLine..endLine (1-based, inclusive).',
      {
        type: 'object',
        properties: {
          fileName: { type: 'string', description: `Path as listed by listToolFiles, e.g. ${example}.` },
          startLine: { type: 'integer', minimum: 1, description: 'First line to return (1-based).' },
          endLine: { type: 'integer', minimum: 1, description: 'Last line to return (1-based, inclusive).' },
        },
        required: ['fileName'],
        additionalProperties: false,
      },
    ),
    fn('getToolDocs', 'Detailed documentation of one tool: description, every parameter, an example call.', {
      type: 'object',
      properties: {
        server: { type: 'string', description: 'Server name, as in the stub file name.' },
        tool: { type: 'string', description: 'Tool name.' },
      },
      required: ['server', 'tool'],
      additionalProperties: false,
    }),
    fn(
      'executeToolCode',
      [
        'Run Starlark (a Python subset) code that calls the tools. Each server is a global object: ' +
          `${serverList(servers)}.`,
        'Call tools synchronously with keyword arguments, e.g. r = server.tool(name=value); results are dicts (r["key"], r.get("key")); a plain-text result is a str.',
        'Assign the answer to the variable `result` (it is returned as JSON); print() goes to the logs.',
        'Not available: imports, classes, try/except, recursion, file I/O, network, random, time.',
      ].join(' '),
      {
        type: 'object',
        properties: { code: { type: 'string', description: 'The Starlark program.' } },
        required: ['code'],
        additionalProperties: false,
      },
    ),
  ];
}

type Answer = { content: string; isError?: boolean };

const fail = (content: string): Answer => ({ content, isError: true });

function optionalLine(args: Record<string, unknown>, field: string): number | string | undefined {
  const value = args[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    return `readToolFile: ${field} must be an integer of at least 1 (lines are 1-based), got ${JSON.stringify(value)}`;
  }
  return value;
}

function readToolFile(args: Record<string, unknown>, servers: CatalogServer[], level: 'server' | 'tool'): Answer {
  const fileName = args.fileName;
  if (typeof fileName !== 'string' || !fileName) return fail('readToolFile: fileName is required: a path from listToolFiles');
  const files = toolFiles(servers, level);
  let wanted = fileName.trim().replace(/^\.?\//, '');
  if (!wanted.startsWith('servers/')) wanted = `servers/${wanted}`;
  if (!wanted.endsWith('.pyi')) wanted += '.pyi';
  const content = files.get(wanted);
  if (content === undefined) {
    return fail(`readToolFile: no file ${JSON.stringify(fileName)}; the files are: ${[...files.keys()].join(', ') || '(none)'}`);
  }
  const start = optionalLine(args, 'startLine');
  const end = optionalLine(args, 'endLine');
  if (typeof start === 'string') return fail(start);
  if (typeof end === 'string') return fail(end);
  const lines = content.replace(/\n$/, '').split('\n');
  const from = start ?? 1;
  const to = Math.min(end ?? lines.length, lines.length);
  if (from > lines.length) return fail(`readToolFile: startLine ${from} is past the end of ${wanted} (${lines.length} lines)`);
  if (to < from) return fail(`readToolFile: endLine ${to} is before startLine ${from}`);
  return { content: lines.slice(from - 1, to).join('\n') };
}

function unknownServer(tool: string, name: string, servers: CatalogServer[]): Answer {
  return fail(`${tool}: unknown server ${JSON.stringify(name)}; available servers: ${servers.map((s) => s.name).join(', ') || '(none)'}`);
}

function findServer(servers: CatalogServer[], name: string): CatalogServer | undefined {
  return servers.find((s) => s.name === name) ?? servers.find((s) => s.global === name);
}

function getToolDocs(args: Record<string, unknown>, servers: CatalogServer[]): Answer {
  if (typeof args.server !== 'string' || !args.server) return fail('getToolDocs: server is required: a server name');
  if (typeof args.tool !== 'string' || !args.tool) return fail('getToolDocs: tool is required: a tool name');
  const server = findServer(servers, args.server);
  if (!server) return unknownServer('getToolDocs', args.server, servers);
  const tool = server.tools.find((t) => t.name === args.tool) ?? server.tools.find((t) => t.attr === args.tool);
  if (!tool) {
    return fail(`getToolDocs: server ${server.name} has no tool ${JSON.stringify(args.tool)}; its tools: ${server.tools.map((t) => t.name).join(', ')}`);
  }
  return { content: toolDocs(server, tool) };
}

/** An MCP CallToolResult as the code sees it: structured content, else JSON text parsed, else text. */
export function toolValue(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as { content?: unknown }).content)) return raw;
  const result = raw as { content: { type?: string; text?: string }[]; structuredContent?: unknown; isError?: boolean };
  const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text ?? '');
  const text = texts.join('\n');
  if (result.isError) throw new Error(text || 'the tool reported an error');
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  if (texts.length !== result.content.length) return raw; // images, resources: the whole result
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function executeToolCode(args: Record<string, unknown>, host: ToolHost, servers: CatalogServer[], opts: CodeModeRunOptions): Promise<Answer> {
  if (typeof args.code !== 'string' || !args.code.trim()) return fail('executeToolCode: code is required: a Starlark program');
  const logs: string[] = [];
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const outcome = await runStarlark(
    args.code,
    servers.map((s) => ({ global: s.global, server: s.name, tools: s.tools.map((t) => ({ attr: t.attr, tool: t.name })) })),
    {
      // The allow-lists are checked here, for every call the code makes, however it reached the
      // binding (alias, getattr, a value passed around): the text scan is only a hint.
      async call(server, tool, callArgs, signal) {
        if (!opts.allowed(server, tool)) throw new Error(`tool ${tool} of server ${server} is not allowed for this request (tools_to_execute)`);
        if (opts.unattended && !opts.autoExecute(server, tool)) {
          throw new Error(`tool ${tool} of server ${server} may not run unattended (not in tools_to_auto_execute)`);
        }
        return toolValue(await host.call(server, tool, callArgs, signal));
      },
      print(line) {
        logs.push(line);
        opts.log(line);
      },
    },
    opts.timeoutMs,
    limits,
  ).catch((err: unknown) => ({ error: `code mode is unavailable: ${err instanceof Error ? err.message : String(err)}`, resultJson: undefined }));
  const logPart = logs.length ? `,"logs":${JSON.stringify(logs)}` : '';
  if (outcome.error !== undefined) return fail(`{"error":${JSON.stringify(outcome.error)}${logPart}}`);
  return { content: `{"result":${outcome.resultJson ?? 'null'}${logPart}}` };
}

/** Runs one meta-tool call. Problems of the input or the code answer isError, never throw. */
export async function runCodeModeTool(name: string, args: Record<string, unknown>, host: ToolHost, opts: CodeModeRunOptions): Promise<Answer> {
  const servers = remember(catalog(host.servers()));
  switch (name) {
    case 'listToolFiles':
      return { content: [...toolFiles(servers, opts.bindingLevel).keys()].join('\n') };
    case 'readToolFile':
      return readToolFile(args ?? {}, servers, opts.bindingLevel);
    case 'getToolDocs':
      return getToolDocs(args ?? {}, servers);
    case 'executeToolCode':
      return executeToolCode(args ?? {}, host, servers, opts);
    default:
      return fail(`unknown code-mode tool ${JSON.stringify(name)}; the tools are ${CODE_MODE_TOOL_NAMES.join(', ')}`);
  }
}

/**
 * The pre-flight text scan (spec rule 7): true when every tool call written in the code is in
 * tools_to_auto_execute, so agent mode may run it without asking. Aliasing, getattr or a server
 * passed around as a value answer false (ask first). Not a security boundary: runCodeModeTool checks
 * every call again. Pass the host so the scan knows the server globals; without it the scan uses the
 * servers of the last codeModeTools / runCodeModeTool call.
 */
export function codeModePreflight(code: string, autoExecute: (server: string, tool: string) => boolean, host?: ToolHost): boolean {
  const servers = host ? catalog(host.servers()) : lastServers;
  return preflight(code, servers, autoExecute);
}

let lastServers: CatalogServer[] = [];

/** Remembers the servers for a codeModePreflight call without a host. */
function remember(servers: CatalogServer[]): CatalogServer[] {
  lastServers = servers;
  return servers;
}
