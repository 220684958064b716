// Unified chat response → Responses object. The item builders and the envelope are exported for
// the stream encoder, so a streamed response.completed is built by the same code as a plain one.
import type { AssistantMessage, ChatResponse, FinishReason, ReasoningDetail, ToolCall, Usage } from '../chat.ts';
import type {
  ResponsesFunctionCallItem,
  ResponsesItemStatus,
  ResponsesMessageItem,
  ResponsesObject,
  ResponsesOutputContent,
  ResponsesOutputItem,
  ResponsesReasoningItem,
  ResponsesRequest,
  ResponsesStatus,
  ResponsesUsage,
} from '../responses.ts';
import { encodeReasoningDetails } from './reasoning-codec.ts';

export interface ResponseIds {
  /** `resp_…`; item ids are derived from it. */
  responseId: string;
  /** Unix seconds. */
  createdAt: number;
}

export function chatToResponses(res: ChatResponse, req: ResponsesRequest, ids: ResponseIds): ResponsesObject {
  const choice = res.choices[0];
  const end = terminalState(choice?.finish_reason ?? null);
  const output = choice ? outputItemsFromMessage(choice.message, req, ids, end.lastItemStatus) : [];
  return responsesEnvelope(req, ids, {
    status: end.status,
    model: res.model,
    output,
    usage: mapUsage(res.usage),
    incomplete_details: end.incomplete_details,
  });
}

/** Output order is the order models produce: reasoning, then text, then tool calls. */
function outputItemsFromMessage(
  message: AssistantMessage,
  req: ResponsesRequest,
  ids: ResponseIds,
  lastItemStatus: ResponsesItemStatus,
): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = [];
  const reasoning = reasoningItem(outputItemId(ids, 'rs', items.length), message.reasoning ?? '', message.reasoning_details ?? [], req);
  if (reasoning) items.push(reasoning);
  const content = messageContent(message.content ?? '', message.refusal ?? '');
  if (content.length > 0) items.push(messageItem(outputItemId(ids, 'msg', items.length), content, 'completed'));
  for (const call of message.tool_calls ?? []) {
    items.push(functionCallItem(outputItemId(ids, 'fc', items.length), call, 'completed'));
  }
  const last = items.at(-1);
  if (last && last.type !== 'reasoning') last.status = lastItemStatus;
  return items;
}

// ---- shared with the stream encoder -----------------------------------------------------------

/** Deterministic, so a streamed and a non-streamed rendering of the same turn agree. */
export function outputItemId(ids: ResponseIds, kind: 'msg' | 'fc' | 'rs', outputIndex: number): string {
  return `${kind}_${ids.responseId.replace(/^resp_/, '')}_${outputIndex}`;
}

export function messageContent(text: string, refusal: string): ResponsesOutputContent[] {
  const content: ResponsesOutputContent[] = [];
  if (text) content.push({ type: 'output_text', text, annotations: [] });
  if (refusal) content.push({ type: 'refusal', refusal });
  return content;
}

export function messageItem(id: string, content: ResponsesOutputContent[], status: ResponsesItemStatus): ResponsesMessageItem {
  return { id, type: 'message', status, role: 'assistant', content };
}

export function functionCallItem(id: string, call: ToolCall, status: ResponsesItemStatus): ResponsesFunctionCallItem {
  return { id, type: 'function_call', status, call_id: call.id, name: call.function.name, arguments: call.function.arguments };
}

export function wantsEncryptedReasoning(req: ResponsesRequest): boolean {
  return req.include?.includes('reasoning.encrypted_content') ?? false;
}

/**
 * The provider's reasoning shown as the summary (chat providers return their thinking whether or not
 * `reasoning.summary` asked for it). Undefined when there is nothing to show or carry.
 */
export function reasoningItem(
  id: string,
  text: string,
  details: ReasoningDetail[],
  req: ResponsesRequest,
): ResponsesReasoningItem | undefined {
  const carry = wantsEncryptedReasoning(req) && details.length > 0;
  if (!text && !carry) return undefined;
  const item: ResponsesReasoningItem = { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [] };
  if (carry) item.encrypted_content = encodeReasoningDetails(details);
  return item;
}

export interface TerminalState {
  status: 'completed' | 'incomplete';
  incomplete_details: ResponsesObject['incomplete_details'];
  /** Status of the item being generated when the turn ended. */
  lastItemStatus: ResponsesItemStatus;
}

export function terminalState(finishReason: FinishReason | null): TerminalState {
  if (finishReason === 'length') {
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, lastItemStatus: 'incomplete' };
  }
  if (finishReason === 'content_filter') {
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, lastItemStatus: 'incomplete' };
  }
  return { status: 'completed', incomplete_details: null, lastItemStatus: 'completed' };
}

export function mapUsage(usage: Usage | null | undefined): ResponsesUsage | null {
  if (!usage) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

export interface ResponseState {
  status: ResponsesStatus;
  model: string;
  output: ResponsesOutputItem[];
  usage?: ResponsesUsage | null;
  incomplete_details?: ResponsesObject['incomplete_details'];
  error?: ResponsesObject['error'];
}

/** The response object around `state`, echoing the request settings the way OpenAI does. */
export function responsesEnvelope(req: ResponsesRequest, ids: ResponseIds, state: ResponseState): ResponsesObject {
  return {
    id: ids.responseId,
    object: 'response',
    created_at: ids.createdAt,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    model: state.model,
    output: state.output,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    // Nothing is kept, so claiming `store: true` would invite a previous_response_id that cannot work.
    store: false,
    temperature: req.temperature ?? null,
    text: req.text ?? { format: { type: 'text' } },
    tool_choice: req.tool_choice ?? 'auto',
    tools: req.tools ?? [],
    top_p: req.top_p ?? null,
    truncation: 'disabled',
    usage: state.usage ?? null,
    user: req.user ?? null,
    metadata: req.metadata ?? {},
  };
}
