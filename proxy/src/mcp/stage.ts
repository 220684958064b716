// MCP in inference, as a request stage (after plan and limits). `before`:
//   1. adds the MCP tools the caller may use to a chat or responses request's `tools`,
//   2. agent mode: when the model's tool calls are all auto-executable (tools_to_auto_execute, or
//      code whose pre-flight passes), runs them and continues the conversation itself, turn by
//      turn through the full pipeline (each turn is its own request: identified, governed, logged),
//      until an answer without tool calls or max_agent_depth turns; then that answer is the
//      request's answer. Otherwise the model's tool calls go back to the application.
// Turns run through the executor the gateway wires in (McpManager.runTurn): without one, tools are
// only added.
import type { IncomingHttpHeaders } from 'node:http';
import type { Stage } from '../pipeline/stage.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { ChatResponse, ToolCall } from '../unified/chat.ts';
import type { ResponsesObject } from '../unified/responses.ts';
import { callerAccess } from './access.ts';
import type { McpManager, TurnOrigin } from './manager.ts';
import { ToolSet } from './toolset.ts';
import { runStreamingChatAgent } from './agent-stream.ts';
import { runStreamingResponsesAgent } from './agent-responses-stream.ts';
import { toolGovernance } from './governance.ts';
import { TurnTotals } from '../pipeline/turns.ts';

/** Bodies of the agent's own turns: they get no tools added and no loop of their own. */
const TURNS = new WeakSet<object>();

/** Headers a turn must not inherit (they describe the outer HTTP body). */
const HOP_HEADERS = ['content-length', 'transfer-encoding', 'connection', 'host', 'expect', 'content-encoding'];

export function turnHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = { ...headers };
  for (const h of HOP_HEADERS) delete out[h];
  return out;
}

export function markTurn<T extends object>(body: T): T {
  TURNS.add(body);
  return body;
}


export function mcpStage(mcp: McpManager): Stage {
  return {
    name: 'mcp',
    before(ctx) {
      // A gateway run in process with no one following its snapshots: start from the first one seen.
      if (!mcp.applied) mcp.apply(ctx.snapshot);
      if (ctx.input !== undefined && typeof ctx.input === 'object' && ctx.input !== null && TURNS.has(ctx.input)) return undefined;
      // The table says which operations get tools, and in which request shape (the native prefixes run none of them).
      const kind = ctx.op?.mcpTools;
      if (!kind || mcp.list().length === 0) return undefined;
      const governance = toolGovernance(ctx.snapshot, ctx.vk, ctx.services);
      const toolset = new ToolSet(mcp, callerAccess(ctx.vk?.record, ctx.headers), { source: kind, requestId: ctx.id, ...(ctx.vk && { vk: ctx.vk.record.id }), ...(governance && { governance }) });
      if (toolset.empty) return undefined;
      const req = ctx.request as Record<string, unknown>;
      const own = Array.isArray(req.tools) ? (req.tools as unknown[]) : [];
      const ownNames = new Set(own.map((t) => toolNameOf(t)).filter((n) => n !== undefined));
      const added = toolset.tools.filter((t) => !ownNames.has(t.function.name));
      const tools = kind === 'chat' ? added : added.map((t) => ({ type: 'function', name: t.function.name, ...(t.function.description !== undefined && { description: t.function.description }), parameters: t.function.parameters }));
      const request = { ...req, tools: [...own, ...tools] };
      ctx.request = request;
      if (!mcp.runTurn) return undefined;
      // From here the turns answer, each through the pipeline; this request stays the one record
      // and the one count, naming the model the client asked for and summing the turns' usage.
      ctx.turns = new TurnTotals();
      const asked = ctx.targets[0];
      if (asked) {
        ctx.provider = asked.provider.name;
        ctx.model = asked.model;
      }
      return kind === 'chat' ? chatAgent(ctx, mcp, toolset, request) : responsesAgent(ctx, mcp, toolset, request);
    },
  };
}

/** What a turn runs on behalf of: the agent request (its id, its totals, its caller: a turn is admitted, not identified, again). */
export function turnOf(ctx: RequestContext): TurnOrigin {
  return { parentRequestId: ctx.id, requestId: ctx.requestId, ...(ctx.turns && { turnOf: ctx.turns }), caller: { principal: ctx.vk, admitted: false } };
}

function toolNameOf(t: unknown): string | undefined {
  const r = t as { name?: unknown; function?: { name?: unknown } };
  const n = r.function?.name ?? r.name;
  return typeof n === 'string' ? n : undefined;
}

/** The calls, when every one is an MCP tool agent mode may run unattended. */
function autoCalls(toolset: ToolSet, calls: readonly ToolCall[] | undefined): ToolCall[] | undefined {
  if (!calls || calls.length === 0) return undefined;
  return calls.every((c) => toolset.has(c.function.name) && toolset.autoExecutable(c.function.name, c.function.arguments)) ? [...calls] : undefined;
}

async function runCalls(toolset: ToolSet, calls: readonly { name: string; args: string }[], signal: AbortSignal): Promise<string[]> {
  const outs = await Promise.all(calls.map((c) => toolset.run(c.name, c.args, signal, true)));
  return outs.map((o) => (o.isError ? `Error: ${o.content}` : o.content));
}

async function chatAgent(ctx: RequestContext, mcp: McpManager, toolset: ToolSet, request: Record<string, unknown>): Promise<Outcome> {
  const headers = turnHeaders(ctx.headers);
  const { maxDepth } = mcp.settings();
  const messages = [...((request.messages as unknown[]) ?? [])];
  if (request.stream === true) return runStreamingChatAgent({ ctx, mcp, toolset, request, messages, headers, maxDepth, autoCalls, runCalls, markTurn, turnOf });
  for (let depth = 1; ; depth++) {
    const outcome = await mcp.runTurn!(ctx.snapshot, { operation: 'chat', body: markTurn({ ...request, messages: [...messages] }), headers, signal: ctx.signal, ...turnOf(ctx) });
    if (outcome.kind !== 'json') return outcome;
    const answer = outcome.value as ChatResponse;
    const message = answer.choices?.[0]?.message;
    const calls = autoCalls(toolset, message?.tool_calls);
    if (!calls || depth >= maxDepth) return outcome;
    const results = await runCalls(toolset, calls.map((c) => ({ name: c.function.name, args: c.function.arguments })), ctx.signal);
    messages.push({ role: 'assistant', content: message?.content ?? null, tool_calls: calls });
    calls.forEach((c, i) => messages.push({ role: 'tool', tool_call_id: c.id, content: results[i] }));
  }
}

async function responsesAgent(ctx: RequestContext, mcp: McpManager, toolset: ToolSet, request: Record<string, unknown>): Promise<Outcome> {
  const headers = turnHeaders(ctx.headers);
  const { maxDepth } = mcp.settings();
  const input: unknown[] = typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : [...((request.input as unknown[]) ?? [])];
  if (request.stream === true) return runStreamingResponsesAgent({ ctx, mcp, toolset, request, input, headers, maxDepth, autoCalls, runCalls, markTurn, turnOf });
  for (let depth = 1; ; depth++) {
    const outcome = await mcp.runTurn!(ctx.snapshot, { operation: 'responses', body: markTurn({ ...request, input: [...input] }), headers, signal: ctx.signal, ...turnOf(ctx) });
    if (outcome.kind !== 'json') return outcome;
    const answer = outcome.value as ResponsesObject & { extra_fields?: ChatResponse['extra_fields'] };
    const fcalls = (answer.output ?? []).filter((o) => o.type === 'function_call');
    const calls = autoCalls(
      toolset,
      fcalls.map((f) => ({ id: f.call_id, type: 'function' as const, function: { name: f.name, arguments: f.arguments } })),
    );
    if (!calls || depth >= maxDepth) return outcome;
    const results = await runCalls(toolset, calls.map((c) => ({ name: c.function.name, args: c.function.arguments })), ctx.signal);
    for (const f of fcalls) input.push({ type: 'function_call', call_id: f.call_id, name: f.name, arguments: f.arguments });
    fcalls.forEach((f, i) => input.push({ type: 'function_call_output', call_id: f.call_id, output: results[i] }));
  }
}

