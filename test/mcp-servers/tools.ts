// The tools of the test MCP servers, built with the official SDK's low-level Server (raw JSON
// Schemas, as real servers publish them). Variants: `basic` (echo, add, slow, fail), `listing-fails`
// (connects, but tools/list answers an error), `changing` (add_tool registers a new tool and
// sends notifications/tools/list_changed) and `silent` (tools appear with no notification).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';

export type Variant = 'basic' | 'listing-fails' | 'changing' | 'silent' | 'big';

/** Tools the `silent` variant lists from now on, with no list_changed notification (in-process servers only). */
const silentTools: string[] = [];
export function addToolSilently(name: string): void {
  silentTools.push(name);
}

interface ToolDef {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  run(args: Record<string, unknown>, extra: { signal: AbortSignal; headers: Record<string, string | string[] | undefined> }): Promise<{ content: { type: 'text'; text: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> }>;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

function baseTools(): ToolDef[] {
  return [
    {
      name: 'echo',
      description: 'Echoes the query back.',
      inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'What to echo' } }, required: ['query'] },
      run: async (a) => text(`echo: ${String(a.query)}`),
    },
    {
      name: 'add',
      description: 'Adds two numbers.',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      run: async (a) => ({ ...text(String(Number(a.a) + Number(a.b))), structuredContent: { sum: Number(a.a) + Number(a.b) } }),
    },
    {
      name: 'slow',
      description: 'Answers after ms milliseconds (default 60000).',
      inputSchema: { type: 'object', properties: { ms: { type: 'number' }, query: { type: 'string' } } },
      run: (a, extra) =>
        new Promise((resolve, reject) => {
          const t = setTimeout(() => resolve(text('slow done')), typeof a.ms === 'number' ? a.ms : 60_000);
          extra.signal.addEventListener('abort', () => {
            clearTimeout(t);
            reject(new Error('cancelled'));
          });
        }),
    },
    {
      name: 'fail',
      description: 'Always reports a tool error.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
      run: async () => ({ ...text('the fail tool failed on purpose'), isError: true }),
    },
    {
      name: 'env',
      description: 'Tells the value of the environment variable named by query.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      run: async (a) => text(process.env[String(a.query)] ?? 'unset'),
    },
    {
      name: 'headers',
      description: 'Tells which authorization header the server saw.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
      run: async (_a, extra) => text(`authorization: ${String(extra.headers.authorization ?? 'none')}`),
    },
  ];
}

/** `canExit`: the stdio server also has `exit`, which ends the process (a server that dies). */
export function buildServer(variant: Variant, headers: Record<string, string | string[] | undefined> = {}, canExit = false): Server {
  const tools = baseTools();
  if (canExit) {
    tools.push({
      name: 'exit',
      description: 'Ends the server process shortly after answering.',
      inputSchema: { type: 'object', properties: {} },
      run: async () => {
        setTimeout(() => {
          process.stderr.write('test server: exiting on request\n');
          process.exit(1);
        }, 20);
        return text('exiting');
      },
    });
  }
  if (variant === 'big') {
    tools.push({
      name: 'big',
      description: 'Answers with `bytes` bytes of text.',
      inputSchema: { type: 'object', properties: { bytes: { type: 'number' } }, required: ['bytes'] },
      run: async (a) => text('x'.repeat(Number(a.bytes))),
    });
  }
  const server = new Server({ name: `test-${variant}`, version: '1.0.0' }, { capabilities: { tools: { listChanged: variant === 'changing' } } });
  server.setRequestHandler(ListToolsRequestSchema, () => {
    if (variant === 'listing-fails') throw new McpError(ErrorCode.InternalError, 'tool listing is broken on purpose');
    const silent = variant === 'silent' ? silentTools.map((name) => ({ name, description: 'Added without notice.', inputSchema: { type: 'object' as const, properties: {} } })) : [];
    return { tools: [...tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })), ...silent] };
  });
  if (variant === 'changing') {
    tools.push({
      name: 'add_tool',
      description: 'Registers a tool named by `query` and announces the list change.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      run: async (a) => {
        const name = String(a.query);
        tools.push({ name, description: `Added at run time: ${name}`, inputSchema: { type: 'object', properties: {} }, run: async () => text(`${name} ran`) });
        await server.sendToolListChanged();
        return text(`added ${name}`);
      },
    });
  }
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = tools.find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${req.params.name}`);
    return tool.run(req.params.arguments ?? {}, { signal: extra.signal, headers });
  });
  return server;
}
