// /mcp: the gateway as an MCP server (streamable HTTP, stateless: any replica answers any request,
// no session is kept). It exposes the tools of the configured MCP clients that the caller's virtual
// key may use, named `<client>-<tool>` as in inference, and runs tools/call through the same checks
// (tools_to_execute, the key's mcp_configs) and the same call log. A virtual key is required unless a
// client opts in to callers without one (access.ts requireMcpCaller, shared with /v1/mcp/tool/execute).
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Exchange } from '../http/exchange.ts';
import { parseJson, readBody } from '../http/body.ts';
import { sendError } from '../http/respond.ts';
import { identifyCaller } from '../governance/auth.ts';
import { GatewayError } from '../unified/errors.ts';
import { callerAccess, requireMcpCaller } from '../mcp/access.ts';
import { ToolSet } from '../mcp/toolset.ts';
import { toolGovernance } from '../mcp/governance.ts';
import type { ToolGovernance } from '../mcp/manager.ts';
import { log } from '../log.ts';

const SERVER_INFO = { name: 'skybridge', version: '1.0.0' };

/** The SDK's server side, loaded with the first /mcp request (a gateway never asked as an MCP server never pays for it). */
async function loadServerSdk() {
  const [server, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
  };
}

type ServerSdk = Awaited<ReturnType<typeof loadServerSdk>>;
let serverSdkLoading: Promise<ServerSdk> | undefined;

function buildServer(sdk: ServerSdk, toolset: ToolSet, governance: ToolGovernance | undefined, signal: AbortSignal): Server {
  const { CallToolRequestSchema, ListToolsRequestSchema } = sdk;
  const server = new sdk.Server(SERVER_INFO, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: toolset.tools.map((t) => ({ name: t.function.name, ...(t.function.description !== undefined && { description: t.function.description }), inputSchema: t.function.parameters as { type: 'object' } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const name = req.params.name;
    if (!toolset.has(name)) return { content: [{ type: 'text' as const, text: `unknown tool '${name}': tools/list names the tools this key may use` }], isError: true };
    // One request against the key's request rate limits; an exhausted budget refuses it. The
    // refusal is the tool's answer, so the agent (and its user) sees why and when to retry.
    try {
      await governance?.admit();
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return { content: [{ type: 'text' as const, text: err.message }], isError: true };
    }
    // The MCP client's user approved the call: not held to tools_to_auto_execute.
    const out = await toolset.run(name, JSON.stringify(req.params.arguments ?? {}), signal, false);
    return { content: [{ type: 'text' as const, text: out.content }], ...(out.isError && { isError: true }) };
  });
  return server;
}

export async function mcpServerEndpoint(ex: Exchange): Promise<void> {
  try {
    const mcp = ex.services.mcp;
    if (!mcp.applied) mcp.apply(ex.snapshot);
    const vk = identifyCaller(ex.snapshot.governance, ex.req.headers);
    requireMcpCaller(ex.snapshot.config.mcp?.client_configs, vk, '/mcp');
    let body: unknown;
    if (ex.req.method === 'POST') body = parseJson(await readBody(ex.req, ex.snapshot.maxBodyBytes));
    else ex.req.resume();
    if (vk) ex.access.vk = vk.record.id;
    const governance = toolGovernance(ex.snapshot, vk, ex.services);
    const toolset = new ToolSet(mcp, callerAccess(vk?.record, ex.req.headers), { source: 'mcp_server', ...(vk && { vk: vk.record.id }), ...(governance && { governance }) });
    const sdk = await (serverSdkLoading ??= loadServerSdk());
    const server = buildServer(sdk, toolset, governance, ex.abort.signal);
    // Stateless: a transport and server per request, closed with it.
    const transport = new sdk.StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ex.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ex.req, ex.res, body);
  } catch (err) {
    if (!(err instanceof GatewayError)) log.error('mcp server request failed', { error: (err as Error)?.stack ?? String(err) });
    sendError(ex.res, err);
  }
}

export const MCP_SERVER_ROUTE = { POST: mcpServerEndpoint, GET: mcpServerEndpoint, DELETE: mcpServerEndpoint };
