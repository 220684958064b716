// Unified (OpenAI chat) request -> Bedrock Converse request. The model goes in the URL path, not
// the body; streaming is a different path (`/converse-stream`) with the same body.
import { alternatingTurns } from '../turns.ts';
import type { ChatRequest, ContentPart, Message, ReasoningDetail, ToolChoice } from '../../unified/chat.ts';
import { invalidRequest } from '../../unified/errors.ts';
import type {
  BedrockContentBlock,
  BedrockConverseRequest,
  BedrockDocumentFormat,
  BedrockImageFormat,
  BedrockMessage,
  BedrockToolChoice,
} from './types.ts';

const IMAGE_FORMATS: Record<string, BedrockImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

const DOCUMENT_FORMATS: Record<string, BedrockDocumentFormat> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

export function toBedrockRequest(req: ChatRequest): BedrockConverseRequest {
  if (req.n !== undefined && req.n > 1) throw invalidRequest('bedrock cannot return more than one choice; n must be 1', 'n');
  const { system, messages } = convertMessages(req.messages);
  if (messages.length === 0) throw invalidRequest('at least one user or assistant message is required', 'messages');
  const out: BedrockConverseRequest = { messages };
  if (system.length > 0) out.system = system;

  const inference: NonNullable<BedrockConverseRequest['inferenceConfig']> = {};
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (req.temperature !== undefined) inference.temperature = req.temperature;
  if (req.top_p !== undefined) inference.topP = req.top_p;
  const stop = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (stop && stop.length > 0) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;

  // Bedrock has no "none" tool choice: the tools are simply not sent.
  if (req.tools && req.tools.length > 0 && req.tool_choice !== 'none') {
    out.toolConfig = {
      tools: req.tools.map((t) => ({
        toolSpec: {
          name: t.function.name,
          ...(t.function.description !== undefined && { description: t.function.description }),
          inputSchema: { json: t.function.parameters ?? { type: 'object', properties: {} } },
        },
      })),
    };
    const choice = toolChoice(req.tool_choice);
    if (choice) out.toolConfig.toolChoice = choice;
  }

  // Claude's extended thinking rides in additionalModelRequestFields.
  const budget = req.reasoning?.max_tokens;
  if (budget !== undefined && budget > 0) {
    out.additionalModelRequestFields = { thinking: { type: 'enabled', budget_tokens: budget } };
  }
  return out;
}

function toolChoice(choice: ToolChoice | undefined): BedrockToolChoice | undefined {
  if (choice === undefined || choice === 'none') return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  return { tool: { name: choice.function.name } };
}

function convertMessages(input: Message[]): { system: Array<{ text: string }>; messages: BedrockMessage[] } {
  const system: Array<{ text: string }> = [];
  const { messages, push } = alternatingTurns<BedrockContentBlock>();
  input.forEach((m, i) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...textOnly(m, i));
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

function textOnly(m: Message, i: number): Array<{ text: string }> {
  if (typeof m.content === 'string') return m.content ? [{ text: m.content }] : [];
  return (m.content ?? []).flatMap((p, k) => {
    if (p.type !== 'text') throw invalidRequest(`${m.role} messages may only contain text parts`, `messages[${i}].content[${k}]`);
    return p.text ? [{ text: p.text }] : [];
  });
}

function userBlocks(content: Message['content'], param: string): BedrockContentBlock[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return (content ?? []).flatMap((p, k) => partBlocks(p, `${param}[${k}]`));
}

function partBlocks(p: ContentPart, param: string): BedrockContentBlock[] {
  switch (p.type) {
    case 'text':
      return p.text ? [{ text: p.text }] : [];
    case 'image_url': {
      const url = p.image_url.url;
      if (!url.startsWith('data:')) throw invalidRequest('bedrock needs images inline as base64 data: URLs', `${param}.image_url.url`);
      const { mediaType, data } = parseDataUrl(url, `${param}.image_url.url`);
      const format = IMAGE_FORMATS[mediaType];
      if (!format) throw invalidRequest(`unsupported image type '${mediaType}': bedrock accepts png, jpeg, gif, webp`, `${param}.image_url.url`);
      return [{ image: { format, source: { bytes: data } } }];
    }
    case 'file': {
      if (p.file.file_data === undefined) throw invalidRequest('bedrock needs file contents inline (file_data)', `${param}.file`);
      const { mediaType, data } = parseDataUrl(p.file.file_data, `${param}.file.file_data`);
      const format = DOCUMENT_FORMATS[mediaType];
      if (!format) throw invalidRequest(`unsupported file type '${mediaType}' for bedrock`, `${param}.file.file_data`);
      // Bedrock document names allow only alphanumerics, spaces, hyphens, parentheses and brackets.
      const name = (p.file.filename ?? 'document').replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9 ()[\]-]/g, ' ').trim() || 'document';
      return [{ document: { format, name, source: { bytes: data } } }];
    }
    case 'input_audio':
      throw invalidRequest('bedrock does not accept audio input', param);
  }
}

function parseDataUrl(url: string, param: string): { mediaType: string; data: string } {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s.exec(url);
  if (!match) throw invalidRequest('expected a base64 data: URL (data:<type>;base64,<data>)', param);
  return { mediaType: match[1].toLowerCase(), data: match[3] };
}

function assistantBlocks(m: Message, i: number): BedrockContentBlock[] {
  const blocks: BedrockContentBlock[] = reasoningBlocks(m.reasoning_details ?? [], m.reasoning);
  if (typeof m.content === 'string') {
    if (m.content) blocks.push({ text: m.content });
  } else {
    for (const block of textOnly({ ...m, role: 'assistant' }, i)) blocks.push(block);
  }
  (m.tool_calls ?? []).forEach((call, j) => {
    blocks.push({
      toolUse: {
        toolUseId: call.id,
        name: call.function.name,
        input: parseArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`),
      },
    });
  });
  return blocks;
}

/** Signed reasoning text (or redacted reasoning) folded back per index, as the model produced it. */
function reasoningBlocks(details: ReasoningDetail[], reasoning: string | undefined): BedrockContentBlock[] {
  const byIndex = new Map<number, { text: string; signature?: string }>();
  const out: BedrockContentBlock[] = [];
  for (const d of details) {
    if (d.type === 'reasoning.encrypted' && d.data) {
      out.push({ reasoningContent: { redactedContent: d.data } });
      continue;
    }
    if (d.type !== 'reasoning.text') continue;
    const key = d.index ?? 0;
    const prev = byIndex.get(key);
    if (prev) {
      prev.text += d.text ?? '';
      if (d.signature) prev.signature = d.signature;
    } else {
      const entry = { text: d.text ?? '', signature: d.signature };
      byIndex.set(key, entry);
      out.push({ reasoningContent: { reasoningText: entry } });
    }
  }
  return out.filter((b) => {
    if (!('reasoningContent' in b) || !b.reasoningContent.reasoningText) return true;
    const r = b.reasoningContent.reasoningText;
    if (!r.text && byIndex.size === 1 && reasoning) r.text = reasoning;
    // Unsigned reasoning cannot be replayed (the model verifies it).
    return Boolean(r.signature);
  });
}

function parseArguments(args: string, param: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw invalidRequest('tool call arguments are not valid JSON', param);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidRequest('tool call arguments must be a JSON object', param);
  return value as Record<string, unknown>;
}

function toolResult(m: Message, i: number): BedrockContentBlock {
  if (!m.tool_call_id) throw invalidRequest('tool messages need a tool_call_id', `messages[${i}].tool_call_id`);
  const content: Array<{ text: string }> =
    typeof m.content === 'string'
      ? [{ text: m.content }]
      : (m.content ?? []).map((p, k) => {
          if (p.type !== 'text') throw invalidRequest('bedrock tool results may only contain text parts', `messages[${i}].content[${k}]`);
          return { text: p.text };
        });
  return { toolResult: { toolUseId: m.tool_call_id, content: content.length ? content : [{ text: '' }], status: 'success' } };
}
