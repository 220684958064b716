// POST /v1/mcp/tool/execute?format=chat|responses: runs one tool call the application approved (a
// call the model made that agent mode did not run) and answers with the tool message to send back.
// The caller's virtual key and the client's tools_to_execute decide what may run; it is not held to
// tools_to_auto_execute (the application is the one asking).
import { randomUUID } from 'node:crypto';
import { parseJson, readBody, refuseProtoMembers } from '../http/body.ts';
import { MAX_JSON_DEPTH, depthOf } from '../schema/names.ts';
import { GatewayError, invalidRequest } from '../unified/errors.ts';
import { callerAccess, requireMcpCaller } from '../mcp/access.ts';
import { ToolSet } from '../mcp/toolset.ts';
import { toolGovernance } from '../mcp/governance.ts';
import type { Accept } from '../pipeline/runner.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { httpRoute } from './serve.ts';

interface ToolCallInput {
  format: 'chat' | 'responses';
  id: string;
  name: string;
  arguments: string;
}

function str(v: unknown): v is string {
  return typeof v === 'string';
}

/** The body in the `format` the query names, as one shape; 400 naming the field otherwise. */
export function readToolCall(body: unknown, format: string | null): ToolCallInput {
  if (format !== null && format !== 'chat' && format !== 'responses') throw invalidRequest(`format must be chat or responses, not '${format}'`, 'format');
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('the request body must be a JSON object (a tool call)');
  const b = body as Record<string, unknown>;
  if (format === 'responses') {
    if (!str(b.name) || b.name === '') throw invalidRequest('name is required: the tool to run', 'name');
    if (b.arguments !== undefined && !str(b.arguments)) throw invalidRequest('arguments must be a JSON string', 'arguments');
    if (b.call_id !== undefined && !str(b.call_id)) throw invalidRequest('call_id must be a string', 'call_id');
    return { format: 'responses', id: (b.call_id as string | undefined) ?? `call_${randomUUID()}`, name: b.name, arguments: (b.arguments as string | undefined) ?? '{}' };
  }
  const fn = b.function as Record<string, unknown> | undefined;
  if (!fn || typeof fn !== 'object') throw invalidRequest('function is required: {name, arguments}', 'function');
  if (!str(fn.name) || fn.name === '') throw invalidRequest('function.name is required: the tool to run', 'function.name');
  if (fn.arguments !== undefined && !str(fn.arguments)) throw invalidRequest('function.arguments must be a JSON string', 'function.arguments');
  if (b.id !== undefined && !str(b.id)) throw invalidRequest('id must be a string', 'id');
  return { format: 'chat', id: (b.id as string | undefined) ?? `call_${randomUUID()}`, name: fn.name, arguments: (fn.arguments as string | undefined) ?? '{}' };
}

function argsObject(text: string, param: string): void {
  let v: unknown;
  try {
    v = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw invalidRequest(`${param} is not valid JSON`, param);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalidRequest(`${param} must be a JSON object`, param);
  // The arguments are a JSON string inside the body, so the body's own nesting check never saw them;
  // the SDK's schema checks and the call log recurse over them.
  if (depthOf(v) > MAX_JSON_DEPTH) throw invalidRequest(`${param} is nested deeper than ${MAX_JSON_DEPTH} levels`, param);
  refuseProtoMembers(v, param);
}

const STATUS: Readonly<Record<string, number>> = { unavailable: 503, timeout: 504 };

const accept: Accept = async (ctx: RequestContext) => {
  const body = ctx.http ? parseJson(await readBody(ctx.http.req, ctx.snapshot.maxBodyBytes)) : ctx.input;
  if (!ctx.http) refuseProtoMembers(body);
  const call = readToolCall(body, ctx.query().get('format'));
  ctx.request = call;
  ctx.scope = { kind: 'none' };
  return async (ctx) => {
    const mcp = ctx.services.mcp;
    const param = call.format === 'chat' ? 'function.name' : 'name';
    if (!mcp) throw new GatewayError(404, 'MCP is not configured on this gateway', { type: 'not_found_error' });
    requireMcpCaller(ctx.snapshot.config.mcp?.client_configs, ctx.vk, '/v1/mcp/tool/execute');
    const access = callerAccess(ctx.vk?.record, ctx.headers);
    // A tool the caller may use whose client is down: say so (only to a caller allowed to know).
    const target = mcp.resolve(call.name);
    if (target && target.conn.state !== 'connected' && access(target.conn.config, target.tool)) {
      throw new GatewayError(503, `MCP client '${target.conn.name}' is not connected${target.conn.lastError ? `: ${target.conn.lastError}` : ''}`, { type: 'service_unavailable', code: 'mcp_unavailable' });
    }
    const governance = toolGovernance(ctx.snapshot, ctx.vk, ctx.services);
    const toolset = new ToolSet(mcp, access, { source: 'execute', requestId: ctx.id, ...(ctx.vk && { vk: ctx.vk.record.id }), ...(governance && { governance }) });
    if (!toolset.has(call.name)) throw invalidRequest(`tool '${call.name}' is not an MCP tool this caller may use (tools are named <client>-<tool>; see GET /api/mcp/clients)`, param);
    argsObject(call.arguments, call.format === 'chat' ? 'function.arguments' : 'arguments');
    // One request against the caller's request rate limits; an exhausted budget refuses it (429 / 402).
    await governance?.admit();
    const out = await toolset.run(call.name, call.arguments, ctx.signal, false);
    const status = out.failure ? STATUS[out.failure] : undefined;
    if (status) throw new GatewayError(status, out.content, { type: out.failure === 'timeout' ? 'timeout_error' : 'service_unavailable', code: `mcp_${out.failure}` });
    if (out.failure === 'failed') throw new GatewayError(502, out.content, { type: 'upstream_error', code: 'mcp_call_failed' });
    // A tool's own error result is an answer the model should see, as the reference sends it.
    const value =
      call.format === 'chat'
        ? { role: 'tool', tool_call_id: call.id, name: call.name, content: out.content }
        : { id: `msg_${randomUUID().replace(/-/g, '')}`, type: 'function_call_output', status: 'completed', role: 'assistant', call_id: call.id, name: call.name, arguments: call.arguments, content: out.content, output: out.content };
    return { kind: 'json', status: 200, value: out.isError ? { ...value, is_error: true } : value };
  };
};

export const mcpToolExecute = httpRoute({ operation: 'mcp_tool', requestType: 'mcp_tool_execution', readFirst: true }, accept);
