// Agent mode for streamed /v1/responses requests. Each turn is a streamed responses request (native
// or bridged over chat, through the whole pipeline); its events are merged into one Responses event
// stream for the client:
//   - response.created / in_progress come from the first turn only; every event is renumbered
//     (sequence_number) and its output_index mapped to the position the item has in the client's
//     stream, so the official SDK's accumulation (output[output_index]) stays consistent;
//   - message and reasoning items pass as they are written; from a turn's first function_call item
//     on, the turn's events are held, like tool-call deltas in streamed chat (agent-stream.ts);
//   - a turn ending with function calls that are all auto-executable: the held events and its
//     terminal event are dropped, the tools run, and the next turn streams on the same response;
//     otherwise the held events go out, then the terminal event, whose response carries the id of
//     the stream and every item the client was sent.
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome, StreamFormat } from '../pipeline/outcome.ts';
import type { ToolCall } from '../unified/chat.ts';
import type { McpManager, TurnOrigin } from './manager.ts';
import type { ToolSet } from './toolset.ts';

export interface ResponsesStreamAgentInput {
  ctx: RequestContext;
  mcp: McpManager;
  toolset: ToolSet;
  request: Record<string, unknown>;
  input: unknown[];
  headers: IncomingHttpHeaders;
  maxDepth: number;
  autoCalls: (toolset: ToolSet, calls: readonly ToolCall[] | undefined) => ToolCall[] | undefined;
  runCalls: (toolset: ToolSet, calls: readonly { name: string; args: string }[], signal: AbortSignal) => Promise<string[]>;
  markTurn: <T extends object>(body: T) => T;
  /** What a turn runs on behalf of (stage.ts turnOf). */
  turnOf: (ctx: RequestContext) => TurnOrigin;
}

interface FunctionCallItem {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
}

interface Ev {
  type: string;
  sequence_number?: number;
  output_index?: number;
  item?: { type?: string; [k: string]: unknown };
  response?: { id?: string; created_at?: number; output?: unknown[]; [k: string]: unknown };
  [k: string]: unknown;
}

const START = new Set(['response.created', 'response.in_progress', 'response.queued']);
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

const isCall = (item: Ev['item']): item is Ev['item'] & FunctionCallItem => item?.type === 'function_call';

export async function runStreamingResponsesAgent(a: ResponsesStreamAgentInput): Promise<Outcome> {
  const turn = (): Promise<Outcome> =>
    a.mcp.runTurn!(a.ctx.snapshot, { operation: 'responses', body: a.markTurn({ ...a.request, input: [...a.input] }), headers: a.headers, signal: a.ctx.signal, ...a.turnOf(a.ctx) });
  const first = await turn();
  if (first.kind !== 'stream') return first;
  let sequence = 0;
  let streamId: string | undefined;
  let createdAt: number | undefined;
  /** The items the client was sent, by their output_index in its stream. */
  const sent: unknown[] = [];

  const renumber = (ev: Ev): Ev => ({ ...ev, sequence_number: sequence++ });

  async function* events(): AsyncGenerator<readonly unknown[]> {
    let outcome: Outcome = first;
    for (let depth = 1; ; depth++) {
      if (outcome.kind === 'error') throw outcome.error;
      if (outcome.kind !== 'stream') return;
      /** This turn's output_index → the client's. */
      const index = new Map<number, number>();
      const place = (ev: Ev): Ev => {
        if (typeof ev.output_index !== 'number') return renumber(ev);
        let at = index.get(ev.output_index);
        if (at === undefined) {
          at = sent.length;
          sent.push(ev.item);
          index.set(ev.output_index, at);
        }
        if (ev.type === 'response.output_item.done' && ev.item) sent[at] = ev.item;
        return renumber({ ...ev, output_index: at });
      };
      const held: Ev[] = [];
      const calls: FunctionCallItem[] = [];
      let holding = false;
      let terminal: Ev | undefined;
      for await (const batch of outcome.items) {
        const pass: Ev[] = [];
        for (const raw of batch) {
          const ev = raw as Ev;
          if (START.has(ev.type)) {
            if (depth > 1) continue;
            if (ev.type === 'response.created') {
              streamId = ev.response?.id;
              createdAt = ev.response?.created_at;
            }
            pass.push(renumber(ev));
          } else if (TERMINAL.has(ev.type)) {
            terminal = ev;
          } else if (ev.type === 'error') {
            // A failed turn ends the stream: what is held goes out first, then the error.
            pass.push(...held.splice(0).map(place), renumber(ev));
          } else {
            if (ev.type === 'response.output_item.added' && isCall(ev.item)) holding = true;
            if (ev.type === 'response.output_item.done' && isCall(ev.item)) calls.push(ev.item);
            if (holding) held.push(ev);
            else pass.push(place(ev));
          }
        }
        if (pass.length > 0) yield pass;
      }
      if (calls.length === 0) for (const o of terminal?.response?.output ?? []) if (isCall(o as Ev['item'])) calls.push(o as FunctionCallItem);
      const auto =
        terminal?.type === 'response.completed'
          ? a.autoCalls(a.toolset, calls.map((c) => ({ id: c.call_id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })))
          : undefined;
      if (!auto || depth >= a.maxDepth) {
        const out = held.map(place);
        if (terminal) {
          const response = { ...terminal.response, ...(streamId !== undefined && { id: streamId }), ...(createdAt !== undefined && { created_at: createdAt }), output: [...sent] };
          out.push(renumber({ ...terminal, response }));
        }
        if (out.length > 0) yield out;
        return;
      }
      const results = await a.runCalls(a.toolset, auto.map((c) => ({ name: c.function.name, args: c.function.arguments })), a.ctx.signal);
      for (const c of calls) a.input.push({ type: 'function_call', call_id: c.call_id, name: c.name, arguments: c.arguments });
      calls.forEach((c, i) => a.input.push({ type: 'function_call_output', call_id: c.call_id, output: results[i] }));
      outcome = await turn();
    }
  }

  // A failure mid-stream is one `error` event numbered in this stream's sequence.
  const format: StreamFormat<unknown> = {
    ...first.format,
    errorEvent: (err) => first.format.encode({ type: 'error', sequence_number: sequence++, code: err.code ?? err.type, message: err.message, param: err.param ?? null }),
  };
  return { kind: 'stream', items: events(), format, ...(first.extra && { extra: first.extra }) };
}
