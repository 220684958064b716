// Unified (OpenAI chat) request -> Anthropic Messages request.
import { alternatingTurns } from '../turns.ts';
import type { ChatRequest, ContentPart, Message, ReasoningDetail, ToolChoice } from '../../unified/chat.ts';
import { invalidRequest } from '../../unified/errors.ts';
import type {
  AnthropicContentBlockParam,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicImageMediaType,
  AnthropicMessageParam,
  AnthropicMessagesRequest,
  AnthropicRedactedThinkingBlock,
  AnthropicTextBlock,
  AnthropicThinkingBlock,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
} from './types.ts';

/** max_tokens when the client sets none (Anthropic requires one); every Claude model allows it. */
export const DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's smallest accepted thinking budget. */
export const MIN_THINKING_BUDGET = 1024;
/**
 * Thinking budget per effort level. Without an explicit max_tokens the request gets
 * budget + DEFAULT_MAX_TOKENS, which for xhigh (28672) still fits Opus 4's 32k output cap.
 */
export const EFFORT_BUDGETS: Record<string, number | undefined> = {
  none: undefined,
  minimal: undefined,
  low: 1024,
  medium: 4096,
  high: 16384,
  xhigh: 24576,
};

const IMAGE_TYPES = new Set<string>(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export function toAnthropicRequest(req: ChatRequest, model: string): AnthropicMessagesRequest {
  if (req.n !== undefined && req.n > 1) {
    throw invalidRequest('anthropic cannot return more than one choice; n must be 1', 'n');
  }
  const { system, messages } = convertMessages(req.messages);
  if (messages.length === 0) {
    throw invalidRequest('at least one user or assistant message is required', 'messages');
  }

  const { maxTokens, budget } = tokenLimits(req);
  const out: AnthropicMessagesRequest = { model, messages, max_tokens: maxTokens };
  if (system.length > 0) out.system = system;
  if (budget !== undefined) {
    out.thinking = { type: 'enabled', budget_tokens: budget };
  } else {
    // Anthropic rejects temperature/top_p changes while thinking, so they only go out without it.
    // OpenAI's temperature range is 0-2, Anthropic's 0-1.
    if (req.temperature !== undefined) out.temperature = Math.min(req.temperature, 1);
    if (req.top_p !== undefined) out.top_p = req.top_p;
  }
  const stop = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (stop && stop.length > 0) out.stop_sequences = stop;
  if (req.user !== undefined) out.metadata = { user_id: req.user };

  if (req.tools && req.tools.length > 0) {
    out.tools = req.tools.map(
      (t): AnthropicTool => ({
        name: t.function.name,
        ...(t.function.description !== undefined && { description: t.function.description }),
        input_schema: t.function.parameters
          ? { type: 'object', ...t.function.parameters }
          : { type: 'object', properties: {} },
      }),
    );
    // tool_choice without tools is an Anthropic error, so it only goes out with tools.
    const choice = toolChoice(req.tool_choice, req.parallel_tool_calls === false);
    if (choice) out.tool_choice = choice;
  }
  if (req.stream === true) out.stream = true;
  return out;
}

function tokenLimits(req: ChatRequest): { maxTokens: number; budget: number | undefined } {
  const requested = req.max_completion_tokens ?? req.max_tokens;
  const explicit = req.reasoning?.max_tokens;
  let budget: number | undefined;
  if (explicit !== undefined) {
    budget = explicit === 0 ? undefined : Math.max(explicit, MIN_THINKING_BUDGET);
  } else {
    const effort = req.reasoning?.effort ?? req.reasoning_effort;
    budget = effort ? EFFORT_BUDGETS[effort] : undefined;
  }
  if (requested === undefined) {
    return { maxTokens: budget === undefined ? DEFAULT_MAX_TOKENS : budget + DEFAULT_MAX_TOKENS, budget };
  }
  // Anthropic requires budget_tokens < max_tokens (the thinking counts against max_tokens).
  if (budget !== undefined && budget >= requested) {
    const limitParam = req.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
    if (explicit !== undefined) {
      throw invalidRequest(
        `reasoning.max_tokens (${budget}) must be lower than ${limitParam} (${requested})`,
        'reasoning.max_tokens',
      );
    }
    budget = requested - 1;
    if (budget < MIN_THINKING_BUDGET) {
      throw invalidRequest(
        `${limitParam} (${requested}) is too small for reasoning: Anthropic needs a thinking budget of at least ${MIN_THINKING_BUDGET} tokens below it`,
        limitParam,
      );
    }
  }
  return { maxTokens: requested, budget };
}

function toolChoice(choice: ToolChoice | undefined, noParallel: boolean): AnthropicToolChoice | undefined {
  const parallel = noParallel ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return noParallel ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'required') return { type: 'any', ...parallel };
  return { type: 'tool', name: choice.function.name, ...parallel };
}

// ---- messages ------------------------------------------------------------------------------

function convertMessages(input: Message[]): { system: AnthropicTextBlock[]; messages: AnthropicMessageParam[] } {
  const system: AnthropicTextBlock[] = [];
  const { messages, push } = alternatingTurns<AnthropicContentBlockParam>();
  input.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...systemBlocks(m, i));
        break;
      case 'user':
        push('user', userBlocks(m.content, `messages[${i}].content`));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(m, i));
        break;
      case 'tool':
        push('user', [toolResult(m, i)]);
        break;
    }
  });
  return { system, messages };
}

function systemBlocks(m: Message, i: number): AnthropicTextBlock[] {
  if (typeof m.content === 'string') return m.content ? [{ type: 'text', text: m.content }] : [];
  return (m.content ?? []).flatMap((p, k): AnthropicTextBlock[] => {
    if (p.type !== 'text') {
      throw invalidRequest(`${m.role} messages may only contain text parts`, `messages[${i}].content[${k}]`);
    }
    return p.text ? [{ type: 'text', text: p.text }] : [];
  });
}

function userBlocks(content: Message['content'], param: string): Array<AnthropicContentBlockParam> {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return (content ?? []).flatMap((p, k) => partBlocks(p, `${param}[${k}]`));
}

function partBlocks(p: ContentPart, param: string): Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> {
  switch (p.type) {
    case 'text':
      // Anthropic rejects empty text blocks.
      return p.text ? [{ type: 'text', text: p.text }] : [];
    case 'image_url':
      return [imageBlock(p.image_url.url, `${param}.image_url.url`)];
    case 'file':
      return [documentBlock(p.file.file_data, `${param}.file`)];
    case 'input_audio':
      throw invalidRequest('anthropic does not accept audio input', param);
  }
}

function imageBlock(url: string, param: string): AnthropicImageBlock {
  if (url.startsWith('data:')) {
    const { mediaType, data } = parseDataUrl(url, param);
    const normalized = mediaType === 'image/jpg' ? 'image/jpeg' : mediaType;
    if (!IMAGE_TYPES.has(normalized)) {
      throw invalidRequest(
        `unsupported image type '${mediaType}': anthropic accepts image/jpeg, image/png, image/gif, image/webp`,
        param,
      );
    }
    return { type: 'image', source: { type: 'base64', media_type: normalized as AnthropicImageMediaType, data } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalidRequest('image url must be a base64 data: URL or an http(s) URL', param);
}

/** Anthropic takes PDFs as document blocks; other file kinds have no native equivalent. */
function documentBlock(fileData: string | undefined, param: string): AnthropicDocumentBlock {
  if (fileData === undefined) {
    throw invalidRequest('anthropic needs file contents inline (file_data); file_id is not supported', param);
  }
  const { mediaType, data } = parseDataUrl(fileData, `${param}.file_data`);
  if (mediaType !== 'application/pdf') {
    throw invalidRequest(`unsupported file type '${mediaType}': anthropic accepts application/pdf`, `${param}.file_data`);
  }
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } };
}

function parseDataUrl(url: string, param: string): { mediaType: string; data: string } {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s.exec(url);
  if (!match) throw invalidRequest('expected a base64 data: URL (data:<type>;base64,<data>)', param);
  return { mediaType: match[1].toLowerCase(), data: match[3] };
}

function assistantBlocks(m: Message, i: number): AnthropicContentBlockParam[] {
  // Thinking must precede the text and tool_use it led to, as Anthropic produced it.
  const blocks: AnthropicContentBlockParam[] = thinkingBlocks(m);
  if (typeof m.content === 'string') {
    if (m.content) blocks.push({ type: 'text', text: m.content });
  } else {
    (m.content ?? []).forEach((p, k) => {
      if (p.type !== 'text') {
        throw invalidRequest('assistant messages may only contain text parts', `messages[${i}].content[${k}]`);
      }
      if (p.text) blocks.push({ type: 'text', text: p.text });
    });
  }
  (m.tool_calls ?? []).forEach((call, j) => {
    const block: AnthropicToolUseBlock = {
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`),
    };
    blocks.push(block);
  });
  return blocks;
}

function parseArguments(args: string, param: string): Record<string, unknown> {
  // Some clients send "" for calls of argument-less tools.
  if (args.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw invalidRequest('tool call arguments are not valid JSON', param);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest('tool call arguments must be a JSON object', param);
  }
  return value as Record<string, unknown>;
}

/**
 * reasoning_details -> thinking / redacted_thinking. Streamed details arrive as fragments sharing
 * an `index` (text pieces, then the signature); they are folded back into one block per index.
 * Text without a signature cannot be replayed (Anthropic verifies it), so it is dropped.
 */
function thinkingBlocks(m: Message): Array<AnthropicThinkingBlock | AnthropicRedactedThinkingBlock> {
  const merged: ReasoningDetail[] = [];
  const byIndex = new Map<number, ReasoningDetail>();
  for (const d of m.reasoning_details ?? []) {
    const prev = d.type === 'reasoning.text' && d.index !== undefined ? byIndex.get(d.index) : undefined;
    if (prev) {
      if (d.text !== undefined) prev.text = (prev.text ?? '') + d.text;
      if (d.signature !== undefined) prev.signature = d.signature;
      continue;
    }
    const copy = { ...d };
    merged.push(copy);
    if (d.type === 'reasoning.text' && d.index !== undefined) byIndex.set(d.index, copy);
  }
  const textCount = merged.filter((d) => d.type === 'reasoning.text').length;
  return merged.flatMap((d): Array<AnthropicThinkingBlock | AnthropicRedactedThinkingBlock> => {
    if (d.type === 'reasoning.text' && d.signature) {
      // A client that kept only the signature detail still has the text in `reasoning`.
      const thinking = d.text ?? (textCount === 1 ? (m.reasoning ?? '') : '');
      return [{ type: 'thinking', thinking, signature: d.signature }];
    }
    if (d.type === 'reasoning.encrypted' && d.data) return [{ type: 'redacted_thinking', data: d.data }];
    return [];
  });
}

function toolResult(m: Message, i: number): AnthropicToolResultBlock {
  if (!m.tool_call_id) throw invalidRequest('tool messages need a tool_call_id', `messages[${i}].tool_call_id`);
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: m.tool_call_id };
  if (typeof m.content === 'string') {
    if (m.content) block.content = m.content;
  } else if (m.content && m.content.length > 0) {
    const parts = m.content.flatMap((p, k) => {
      const param = `messages[${i}].content[${k}]`;
      if (p.type !== 'text' && p.type !== 'image_url') {
        throw invalidRequest('tool results may only contain text and image parts', param);
      }
      return partBlocks(p, param) as Array<AnthropicTextBlock | AnthropicImageBlock>;
    });
    if (parts.length > 0) block.content = parts;
  }
  return block;
}
