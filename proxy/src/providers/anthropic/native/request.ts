// Native Anthropic Messages request (what `@anthropic-ai/sdk` sends to /anthropic/v1/messages) ->
// unified chat request, so an Anthropic client can reach any provider. The inverse of
// ../request.ts: a request it produced comes back unchanged. Anything with no unified equivalent
// that would change what the model sees (server tools, file references, unknown blocks) is
// refused; hints that only tune delivery (cache_control, citations, top_k) are dropped.
import type { ChatRequest, ContentPart, Message, ReasoningDetail, ReasoningEffort, Tool, ToolCall, ToolChoice } from '../../../unified/chat.ts';
import { invalidRequest } from '../../../unified/errors.ts';
import { decodeReasoningDetails } from '../../../unified/responses-bridge/reasoning-codec.ts';
import type { AnthropicMessagesRequest, AnthropicTextBlock } from '../types.ts';

/**
 * The request as clients send it: wider than what the gateway sends upstream (string `system`,
 * adaptive thinking, `output_config`) plus the gateway's `fallbacks` extension.
 */
export interface AnthropicNativeRequest extends Omit<AnthropicMessagesRequest, 'system' | 'thinking'> {
  system?: string | AnthropicTextBlock[];
  thinking?: { type: string; budget_tokens?: number };
  output_config?: {
    effort?: string | null;
    format?: { type: string; schema?: Record<string, unknown> } | null;
  };
  /** Gateway extension: `provider/model` names to try when the primary fails. */
  fallbacks?: string[];
}

/** Loose view of a block as read off the wire; each case checks the fields it uses. */
interface WireBlock {
  type?: unknown;
  [key: string]: unknown;
}

const EFFORTS: Record<string, ReasoningEffort> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh' };

export function fromAnthropicRequest(req: AnthropicNativeRequest): ChatRequest {
  if (!Array.isArray(req.messages) || req.messages.length === 0) {
    throw invalidRequest('messages must be a non-empty array', 'messages');
  }
  const messages: Message[] = [...systemMessages(req.system), ...req.messages.flatMap(convertMessage)];
  const out: ChatRequest = { model: req.model, messages };

  if (req.fallbacks !== undefined) {
    if (!Array.isArray(req.fallbacks) || !req.fallbacks.every((f) => typeof f === 'string' && f !== '')) {
      throw invalidRequest('fallbacks must be an array of provider/model names', 'fallbacks');
    }
    out.fallbacks = req.fallbacks;
  }
  if (typeof req.max_tokens === 'number') out.max_tokens = req.max_tokens;
  if (typeof req.temperature === 'number') out.temperature = req.temperature;
  if (typeof req.top_p === 'number') out.top_p = req.top_p;
  if (req.stop_sequences && req.stop_sequences.length > 0) out.stop = req.stop_sequences;
  if (typeof req.metadata?.user_id === 'string') out.user = req.metadata.user_id;

  const reasoning = reasoningConfig(req);
  if (reasoning) out.reasoning = reasoning;
  const format = req.output_config?.format;
  if (format?.type === 'json_schema' && format.schema) {
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  }

  if (req.tools != null && !Array.isArray(req.tools)) throw invalidRequest('tools must be an array', 'tools');
  if (req.tools && req.tools.length > 0) out.tools = req.tools.map(convertTool);
  if (req.tool_choice) {
    const choice = req.tool_choice;
    out.tool_choice = convertToolChoice(choice);
    if ('disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  }
  if (req.stream === true) {
    out.stream = true;
    // message_delta reports output_tokens, so the stream must always end with usage.
    out.stream_options = { include_usage: true };
  }
  return out;
}

function reasoningConfig(req: AnthropicNativeRequest): ChatRequest['reasoning'] {
  const thinking = req.thinking;
  const effort = req.output_config?.effort ? EFFORTS[req.output_config.effort] : undefined;
  if (thinking?.type === 'enabled') {
    if (typeof thinking.budget_tokens !== 'number') {
      throw invalidRequest('thinking.budget_tokens is required when thinking is enabled', 'thinking.budget_tokens');
    }
    return { max_tokens: thinking.budget_tokens };
  }
  // Adaptive thinking lets the model decide; effort (if given) is the closest unified knob.
  if (thinking?.type === 'adaptive') return { effort: effort ?? 'medium' };
  if (thinking?.type === 'disabled') return undefined;
  return effort ? { effort } : undefined;
}

function systemMessages(system: AnthropicNativeRequest['system']): Message[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return system ? [{ role: 'system', content: system }] : [];
  if (!Array.isArray(system)) throw invalidRequest('system must be a string or an array of text blocks', 'system');
  const parts = system.map((b, k): ContentPart => {
    const block = b as unknown as WireBlock;
    if (block.type !== 'text' || typeof block.text !== 'string') {
      throw invalidRequest('system blocks must be text blocks', `system[${k}].type`);
    }
    return { type: 'text', text: block.text };
  });
  return parts.length > 0 ? [{ role: 'system', content: parts }] : [];
}

// ---- messages ------------------------------------------------------------------------------

function convertMessage(m: AnthropicNativeRequest['messages'][number], i: number): Message[] {
  const param = `messages[${i}]`;
  if (m?.role !== 'user' && m?.role !== 'assistant') {
    throw invalidRequest("message role must be 'user' or 'assistant'", `${param}.role`);
  }
  if (typeof m.content === 'string') return [{ role: m.role, content: m.content }];
  if (!Array.isArray(m.content)) {
    throw invalidRequest('message content must be a string or an array of content blocks', `${param}.content`);
  }
  const blocks = m.content as unknown as WireBlock[];
  return m.role === 'user' ? userMessages(blocks, param) : [assistantMessage(blocks, param)];
}

/** Tool results become `tool` messages, ahead of whatever else the user turn says. */
function userMessages(blocks: WireBlock[], param: string): Message[] {
  const tools: Message[] = [];
  const parts: ContentPart[] = [];
  blocks.forEach((block, j) => {
    const at = `${param}.content[${j}]`;
    if (block?.type === 'tool_result') tools.push(toolMessage(block, at));
    else parts.push(...contentParts(block, at));
  });
  return parts.length > 0 ? [...tools, { role: 'user', content: parts }] : tools;
}

/** Text, image and document blocks: what user turns (and tool results) may carry. */
function contentParts(block: WireBlock, at: string): ContentPart[] {
  switch (block?.type) {
    case 'text':
      return [{ type: 'text', text: str(block.text, `${at}.text`) }];
    case 'image':
      return [{ type: 'image_url', image_url: { url: imageUrl(block.source, `${at}.source`) } }];
    case 'document':
      return [documentPart(block, at)];
    default:
      throw unsupportedBlock(block, at);
  }
}

function imageUrl(source: unknown, at: string): string {
  const s = (source ?? {}) as WireBlock;
  if (s.type === 'base64') return `data:${str(s.media_type, `${at}.media_type`)};base64,${str(s.data, `${at}.data`)}`;
  if (s.type === 'url') return str(s.url, `${at}.url`);
  throw invalidRequest("image source must be of type 'base64' or 'url' (file references are not supported)", `${at}.type`);
}

/** Base64 PDFs become file parts; plain-text documents become text. */
function documentPart(block: WireBlock, at: string): ContentPart {
  const s = (block.source ?? {}) as WireBlock;
  if (s.type === 'base64') {
    const mediaType = str(s.media_type, `${at}.source.media_type`);
    const file: { file_data: string; filename?: string } = { file_data: `data:${mediaType};base64,${str(s.data, `${at}.source.data`)}` };
    if (typeof block.title === 'string' && block.title) file.filename = block.title;
    return { type: 'file', file };
  }
  if (s.type === 'text') return { type: 'text', text: str(s.data, `${at}.source.data`) };
  throw invalidRequest("document source must be of type 'base64' or 'text'", `${at}.source.type`);
}

function toolMessage(block: WireBlock, at: string): Message {
  const id = str(block.tool_use_id, `${at}.tool_use_id`);
  const content = block.content;
  if (content === undefined || content === null) return { role: 'tool', tool_call_id: id, content: '' };
  if (typeof content === 'string') return { role: 'tool', tool_call_id: id, content };
  if (!Array.isArray(content)) throw invalidRequest('tool_result content must be a string or an array of blocks', `${at}.content`);
  const parts = (content as WireBlock[]).flatMap((b, k) => contentParts(b, `${at}.content[${k}]`));
  // Text-only results collapse to a string, the form every provider accepts for tool messages.
  const textOnly = parts.every((p) => p.type === 'text');
  return {
    role: 'tool',
    tool_call_id: id,
    content: textOnly ? parts.map((p) => (p.type === 'text' ? p.text : '')).join('') : parts,
  };
}

/** Thinking first (as reasoning_details), then text, then tool calls: the order Anthropic produces. */
function assistantMessage(blocks: WireBlock[], param: string): Message {
  const texts: string[] = [];
  const thoughts: string[] = [];
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  blocks.forEach((block, j) => {
    const at = `${param}.content[${j}]`;
    switch (block?.type) {
      case 'text':
        texts.push(str(block.text, `${at}.text`));
        break;
      case 'thinking': {
        const text = str(block.thinking, `${at}.thinking`);
        thoughts.push(text);
        const detail: ReasoningDetail = { type: 'reasoning.text', text };
        if (typeof block.signature === 'string') detail.signature = block.signature;
        details.push(detail);
        break;
      }
      case 'redacted_thinking': {
        const data = str(block.data, `${at}.data`);
        // Reasoning from another provider that toAnthropicMessage had to wrap travels back intact.
        details.push(...(decodeReasoningDetails(data, `${at}.data`) ?? [{ type: 'reasoning.encrypted', data }]));
        break;
      }
      case 'tool_use': {
        const input = block.input ?? {};
        if (typeof input !== 'object' || Array.isArray(input)) throw invalidRequest('tool_use input must be an object', `${at}.input`);
        toolCalls.push({
          id: str(block.id, `${at}.id`),
          type: 'function',
          function: { name: str(block.name, `${at}.name`), arguments: JSON.stringify(input) },
        });
        break;
      }
      default:
        throw unsupportedBlock(block, at);
    }
  });
  const message: Message = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thoughts.some((t) => t !== '')) message.reasoning = thoughts.join('');
  if (details.length > 0) message.reasoning_details = details;
  return message;
}

// ---- tools ---------------------------------------------------------------------------------

function convertTool(tool: NonNullable<AnthropicNativeRequest['tools']>[number], i: number): Tool {
  const t = tool as unknown as WireBlock;
  if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
    throw invalidRequest(`tool type ${JSON.stringify(t.type)} is an Anthropic server tool; only custom tools are supported`, `tools[${i}].type`);
  }
  const name = str(t.name, `tools[${i}].name`);
  const schema = t.input_schema;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw invalidRequest('input_schema must be a JSON schema object', `tools[${i}].input_schema`);
  }
  const fn: Tool['function'] = { name, parameters: schema as Record<string, unknown> };
  if (typeof t.description === 'string') fn.description = t.description;
  if (typeof t.strict === 'boolean') fn.strict = t.strict;
  return { type: 'function', function: fn };
}

function convertToolChoice(choice: NonNullable<AnthropicNativeRequest['tool_choice']>): ToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: str(choice.name, 'tool_choice.name') } };
    default:
      throw invalidRequest(`unknown tool_choice type ${JSON.stringify((choice as WireBlock).type)}`, 'tool_choice.type');
  }
}

// ---- helpers -------------------------------------------------------------------------------

function str(v: unknown, param: string): string {
  if (typeof v !== 'string') throw invalidRequest(`${param} must be a string`, param);
  return v;
}

function unsupportedBlock(block: WireBlock | undefined, at: string) {
  const type = typeof block?.type === 'string' ? `'${block.type}'` : 'missing';
  return invalidRequest(`content block type ${type} is not supported here`, `${at}.type`);
}
