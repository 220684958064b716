// Responses request → unified chat request, for providers without a native Responses API. The
// bridge is stateless: anything that needs OpenAI's server-side storage (previous_response_id,
// conversations, stored prompts, background runs) or OpenAI-hosted tools is refused rather than
// silently dropped, because dropping it would change what the model sees.
import type {
  ChatRequest,
  ContentPart,
  Message,
  ReasoningDetail,
  Tool,
  ToolCall,
  ToolChoice,
} from '../chat.ts';
import { invalidRequest } from '../errors.ts';
import type {
  ResponsesInputItem,
  ResponsesInputPart,
  ResponsesRequest,
  ResponsesTool,
  ResponsesToolChoice,
} from '../responses.ts';
import { decodeReasoningDetails } from './reasoning-codec.ts';

export function responsesToChat(req: ResponsesRequest): ChatRequest {
  refuseStatefulFields(req);

  const messages: Message[] = [];
  if (req.instructions) messages.push({ role: 'system', content: req.instructions });
  const conversation = inputToMessages(req.input);
  if (conversation.length === 0) throw invalidRequest('input must contain at least one message', 'input');
  messages.push(...conversation);

  const chat: ChatRequest = { model: req.model, messages };
  if (req.fallbacks) chat.fallbacks = req.fallbacks;
  if (req.stream) {
    chat.stream = true;
    // response.completed must carry usage, so the bridge always asks for it.
    chat.stream_options = { include_usage: true };
  }
  if (req.temperature != null) chat.temperature = req.temperature;
  if (req.top_p != null) chat.top_p = req.top_p;
  if (req.max_output_tokens != null) chat.max_completion_tokens = req.max_output_tokens;
  if (req.user !== undefined) chat.user = req.user;
  if (req.parallel_tool_calls != null) chat.parallel_tool_calls = req.parallel_tool_calls;
  if (req.reasoning?.effort != null) chat.reasoning_effort = req.reasoning.effort;

  const tools = req.tools?.map(toChatTool);
  if (req.tool_choice !== undefined) {
    const { choice, allowed } = toChatToolChoice(req.tool_choice);
    chat.tool_choice = choice;
    if (tools && allowed) chat.tools = tools.filter((t) => allowed.has(t.function.name));
  }
  if (tools && !chat.tools) chat.tools = tools;

  const format = req.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    const jsonSchema: Record<string, unknown> = { name: format.name, schema: format.schema };
    if (format.description !== undefined) jsonSchema.description = format.description;
    if (format.strict != null) jsonSchema.strict = format.strict;
    chat.response_format = { type: 'json_schema', json_schema: jsonSchema };
  }
  return chat;
}

function refuseStatefulFields(req: ResponsesRequest): void {
  const why = 'is not supported for providers without a native Responses API (the gateway stores no responses)';
  if (req.previous_response_id) throw invalidRequest(`previous_response_id ${why}`, 'previous_response_id');
  if (req.conversation != null) throw invalidRequest(`conversation ${why}`, 'conversation');
  if (req.prompt != null) throw invalidRequest(`prompt ${why}`, 'prompt');
  if (req.background) throw invalidRequest(`background ${why}`, 'background');
}

// ---- input ------------------------------------------------------------------------------------

/** Assistant-side items (reasoning, assistant messages, function calls) gathered into one chat turn. */
interface AssistantTurn {
  parts: ContentPart[];
  toolCalls: ToolCall[];
  details: ReasoningDetail[];
}

function inputToMessages(input: ResponsesRequest['input']): Message[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];

  const messages: Message[] = [];
  let turn: AssistantTurn | undefined;
  const flush = () => {
    if (turn) {
      const message = assistantMessage(turn);
      if (message) messages.push(message);
    }
    turn = undefined;
  };
  const openTurn = () => (turn ??= { parts: [], toolCalls: [], details: [] });

  input.forEach((item: ResponsesInputItem, i) => {
    const path = `input[${i}]`;
    switch (item.type) {
      case undefined:
      case 'message': {
        const content = typeof item.content === 'string' ? item.content : convertParts(item.content, `${path}.content`);
        if (item.role === 'assistant') {
          const parts = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
          openTurn().parts.push(...parts);
        } else {
          flush();
          messages.push({ role: item.role, content });
        }
        break;
      }
      case 'function_call':
        openTurn().toolCalls.push({
          id: item.call_id,
          type: 'function',
          function: { name: item.name, arguments: item.arguments },
        });
        break;
      case 'function_call_output':
        flush();
        messages.push({
          role: 'tool',
          tool_call_id: item.call_id,
          content: typeof item.output === 'string' ? item.output : convertParts(item.output, `${path}.output`),
        });
        break;
      case 'reasoning': {
        // Only our own encrypted_content is replayable; summaries alone carry no signature, and
        // other providers cannot use OpenAI's encrypted reasoning, so those items are skipped.
        const details = item.encrypted_content
          ? decodeReasoningDetails(item.encrypted_content, `${path}.encrypted_content`)
          : undefined;
        if (details) openTurn().details.push(...details);
        break;
      }
    }
  });
  flush();
  return messages;
}

function assistantMessage(turn: AssistantTurn): Message | undefined {
  // Reasoning with nothing after it belongs to no turn a provider would accept.
  if (turn.parts.length === 0 && turn.toolCalls.length === 0) return undefined;
  const [first] = turn.parts;
  const message: Message = {
    role: 'assistant',
    content: !first ? null : turn.parts.length === 1 && first.type === 'text' ? first.text : turn.parts,
  };
  if (turn.toolCalls.length > 0) message.tool_calls = turn.toolCalls;
  if (turn.details.length > 0) message.reasoning_details = turn.details;
  return message;
}

function convertParts(parts: ResponsesInputPart[], path: string): ContentPart[] {
  return parts.map((part, j) => convertPart(part, `${path}[${j}]`));
}

function convertPart(part: ResponsesInputPart, path: string): ContentPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    case 'input_image': {
      if (part.image_url) {
        const image: { url: string; detail?: string } = { url: part.image_url };
        if (part.detail !== undefined) image.detail = part.detail;
        return { type: 'image_url', image_url: image };
      }
      // A file id is no URL; as a file reference the provider translator can resolve it in the
      // provider's own file store (or refuse it) instead of fetching it as a link.
      if (part.file_id) return { type: 'file', file: { file_id: part.file_id } };
      throw invalidRequest('input_image needs image_url or file_id', path);
    }
    case 'input_file': {
      if (part.file_url !== undefined) {
        throw invalidRequest('input_file.file_url is not supported here; send file_data or file_id', `${path}.file_url`);
      }
      if (!part.file_data && !part.file_id) throw invalidRequest('input_file needs file_data or file_id', path);
      const file: { file_data?: string; file_id?: string; filename?: string } = {};
      if (part.file_data) file.file_data = part.file_data;
      if (part.file_id) file.file_id = part.file_id;
      if (part.filename !== undefined) file.filename = part.filename;
      return { type: 'file', file };
    }
    case 'input_audio':
      return { type: 'input_audio', input_audio: { data: part.input_audio.data, format: part.input_audio.format } };
  }
}

// ---- tools ------------------------------------------------------------------------------------

function toChatTool(tool: ResponsesTool, i: number): Tool {
  if (tool.type !== 'function') {
    throw invalidRequest(
      `tool type '${tool.type}' is not supported: only 'function' tools work with providers without a native Responses API`,
      `tools[${i}].type`,
    );
  }
  if (!tool.name) throw invalidRequest('function tools need a name', `tools[${i}].name`);
  const fn: Tool['function'] = { name: tool.name };
  if (tool.description != null) fn.description = tool.description;
  if (tool.parameters != null) fn.parameters = tool.parameters;
  if (tool.strict != null) fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

/**
 * `allowed_tools` has no chat equivalent: it becomes its mode plus the set of names the tool list
 * is narrowed to, which constrains the model the same way.
 */
function toChatToolChoice(tc: ResponsesToolChoice): { choice: ToolChoice; allowed?: Set<string> } {
  if (typeof tc === 'string') return { choice: tc };
  if (tc.type === 'function') {
    if (!tc.name) throw invalidRequest('tool_choice of type function needs a name', 'tool_choice.name');
    return { choice: { type: 'function', function: { name: tc.name } } };
  }
  if (tc.type === 'allowed_tools') {
    const allowed = new Set<string>();
    (tc.tools ?? []).forEach((t, k) => {
      if (t.type !== 'function' || !t.name) {
        throw invalidRequest(`allowed tool type ${JSON.stringify(t.type)} is not supported: only named function tools`, `tool_choice.tools[${k}]`);
      }
      allowed.add(t.name);
    });
    return { choice: tc.mode ?? 'auto', allowed };
  }
  throw invalidRequest(
    `tool_choice type '${tc.type}' is not supported: only function tools work with providers without a native Responses API`,
    'tool_choice.type',
  );
}
