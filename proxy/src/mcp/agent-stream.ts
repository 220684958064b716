// Agent mode for streamed chat requests. Each turn streams; content passes to the client as it
// comes, while tool-call deltas, finish and usage chunks are held back. When the turn ends with
// tool calls that are all auto-executable, the held chunks are dropped, the tools run, and the next
// turn streams on the same response; otherwise the held chunks go out and the stream ends. So the
// client sees one stream whose final turn is streamed as the model writes it.
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { ChatChunk, ToolCall } from '../unified/chat.ts';
import type { McpManager, TurnOrigin } from './manager.ts';
import type { ToolSet } from './toolset.ts';

export interface StreamAgentInput {
  ctx: RequestContext;
  mcp: McpManager;
  toolset: ToolSet;
  request: Record<string, unknown>;
  messages: unknown[];
  headers: IncomingHttpHeaders;
  maxDepth: number;
  autoCalls: (toolset: ToolSet, calls: readonly ToolCall[] | undefined) => ToolCall[] | undefined;
  runCalls: (toolset: ToolSet, calls: readonly { name: string; args: string }[], signal: AbortSignal) => Promise<string[]>;
  markTurn: <T extends object>(body: T) => T;
  /** What a turn runs on behalf of (stage.ts turnOf). */
  turnOf: (ctx: RequestContext) => TurnOrigin;
}

export async function runStreamingChatAgent(a: StreamAgentInput): Promise<Outcome> {
  const turn = (): Promise<Outcome> => a.mcp.runTurn!(a.ctx.snapshot, { operation: 'chat', body: a.markTurn({ ...a.request, messages: [...a.messages] }), headers: a.headers, signal: a.ctx.signal, ...a.turnOf(a.ctx) });
  const first = await turn();
  if (first.kind !== 'stream') return first;
  async function* items(): AsyncGenerator<readonly unknown[]> {
    let outcome: Outcome = first;
    for (let depth = 1; ; depth++) {
      if (outcome.kind === 'error') throw outcome.error;
      if (outcome.kind !== 'stream') return;
      const held: unknown[] = [];
      let holding = false;
      let content = '';
      const calls = new Map<number, ToolCall>();
      for await (const batch of outcome.items) {
        const pass: unknown[] = [];
        for (const item of batch) {
          const chunk = item as ChatChunk;
          const choice = chunk.choices?.[0];
          for (const d of choice?.delta?.tool_calls ?? []) {
            holding = true;
            const c = calls.get(d.index) ?? { id: '', type: 'function' as const, function: { name: '', arguments: '' } };
            if (d.id) c.id = d.id;
            if (d.function?.name) c.function.name += d.function.name;
            if (d.function?.arguments) c.function.arguments += d.function.arguments;
            calls.set(d.index, c);
          }
          if (typeof choice?.delta?.content === 'string') content += choice.delta.content;
          const terminal = choice?.finish_reason != null || (chunk.usage != null && (chunk.choices?.length ?? 0) === 0);
          if (holding || terminal) held.push(item);
          else pass.push(item);
        }
        if (pass.length > 0) yield pass;
      }
      const list = [...calls.entries()].sort((x, y) => x[0] - y[0]).map(([, c]) => c);
      const auto = a.autoCalls(a.toolset, list);
      if (!auto || depth >= a.maxDepth) {
        if (held.length > 0) yield held;
        return;
      }
      const results = await a.runCalls(a.toolset, auto.map((c) => ({ name: c.function.name, args: c.function.arguments })), a.ctx.signal);
      a.messages.push({ role: 'assistant', content: content === '' ? null : content, tool_calls: auto });
      auto.forEach((c, i) => a.messages.push({ role: 'tool', tool_call_id: c.id, content: results[i] }));
      outcome = await turn();
    }
  }
  return { kind: 'stream', items: items(), format: first.format, ...(first.extra && { extra: first.extra }) };
}
