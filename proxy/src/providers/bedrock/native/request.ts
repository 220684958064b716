// Native Bedrock Converse request (what @aws-sdk/client-bedrock-runtime sends to
// /bedrock/model/{modelId}/converse[-stream]) -> unified chat request, so a Bedrock client can
// reach any provider. The inverse of ../request.ts: a request it produced comes back unchanged.
// Content that would change what the model sees and has no unified equivalent (S3 locations,
// video, guardrails) is refused; hints that only tune delivery (cachePoint, requestMetadata,
// performanceConfig, unknown additionalModelRequestFields) are dropped.
import type { ChatRequest, ContentPart, Message, ReasoningDetail, Tool, ToolCall, ToolChoice } from '../../../unified/chat.ts';
import { invalidRequest } from '../../../unified/errors.ts';

/** Loose view of a JSON object read off the wire; each use checks the fields it reads. */
type Wire = Record<string, unknown>;

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };
const BINARY_DOCUMENTS: Record<string, string> = {
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};
/** Text documents become text parts: every provider reads text, few read a text/csv file. */
const TEXT_DOCUMENTS = new Set(['txt', 'md', 'csv', 'html']);

/** `modelId` is the decoded path segment; the caller has already routed it. */
export function fromBedrockConverseRequest(body: unknown, model: string, stream: boolean): ChatRequest {
  const b = obj(body, '');
  if (!Array.isArray(b.messages) || b.messages.length === 0) throw invalidRequest('messages must be a non-empty array', 'messages');
  if (b.guardrailConfig !== undefined) {
    throw invalidRequest('guardrailConfig is not supported through the gateway: Bedrock guardrails cannot be applied to other providers', 'guardrailConfig');
  }
  const messages: Message[] = [...systemMessages(b.system), ...b.messages.flatMap((m, i) => convertMessage(m, i))];
  const out: ChatRequest = { model, messages };

  if (b.fallbacks !== undefined) {
    if (!Array.isArray(b.fallbacks) || !b.fallbacks.every((f) => typeof f === 'string' && f !== '')) {
      throw invalidRequest('fallbacks must be an array of provider/model names', 'fallbacks');
    }
    out.fallbacks = b.fallbacks as string[];
  }

  if (b.inferenceConfig !== undefined) {
    const inf = obj(b.inferenceConfig, 'inferenceConfig');
    if (inf.maxTokens !== undefined) out.max_tokens = int(inf.maxTokens, 'inferenceConfig.maxTokens', 1);
    if (inf.temperature !== undefined) out.temperature = num(inf.temperature, 'inferenceConfig.temperature');
    if (inf.topP !== undefined) out.top_p = num(inf.topP, 'inferenceConfig.topP');
    if (inf.stopSequences !== undefined) {
      if (!Array.isArray(inf.stopSequences) || !inf.stopSequences.every((s) => typeof s === 'string')) {
        throw invalidRequest('stopSequences must be an array of strings', 'inferenceConfig.stopSequences');
      }
      if (inf.stopSequences.length > 0) out.stop = inf.stopSequences as string[];
    }
  }

  if (b.toolConfig !== undefined) {
    const tc = obj(b.toolConfig, 'toolConfig');
    if (!Array.isArray(tc.tools)) throw invalidRequest('toolConfig.tools must be an array', 'toolConfig.tools');
    const tools = tc.tools.flatMap((t, i) => convertTool(t, i));
    if (tools.length > 0) out.tools = tools;
    if (tc.toolChoice !== undefined) out.tool_choice = convertToolChoice(obj(tc.toolChoice, 'toolConfig.toolChoice'));
  }

  // Claude's extended thinking rides in additionalModelRequestFields, as ../request.ts puts it.
  const extra = b.additionalModelRequestFields;
  if (extra !== undefined && extra !== null) {
    const thinking = obj(extra, 'additionalModelRequestFields').thinking;
    if (thinking !== undefined) {
      const t = obj(thinking, 'additionalModelRequestFields.thinking');
      if (t.type === 'enabled') out.reasoning = { max_tokens: int(t.budget_tokens, 'additionalModelRequestFields.thinking.budget_tokens', 1) };
    }
  }

  if (stream) {
    out.stream = true;
    // The metadata event reports usage, so the stream must always end with it.
    out.stream_options = { include_usage: true };
  }
  return out;
}

function systemMessages(system: unknown): Message[] {
  if (system === undefined || system === null) return [];
  if (!Array.isArray(system)) throw invalidRequest('system must be an array of system content blocks', 'system');
  const parts: ContentPart[] = system.flatMap((block, k): ContentPart[] => {
    const at = `system[${k}]`;
    const b = obj(block, at);
    if (typeof b.text === 'string') return b.text ? [{ type: 'text', text: b.text }] : [];
    if (b.cachePoint !== undefined) return [];
    if (b.guardContent !== undefined) return [{ type: 'text', text: guardText(b.guardContent, `${at}.guardContent`) }];
    throw unsupported(b, at);
  });
  return parts.length > 0 ? [{ role: 'system', content: parts }] : [];
}

// ---- messages ------------------------------------------------------------------------------

function convertMessage(m: unknown, i: number): Message[] {
  const at = `messages[${i}]`;
  const msg = obj(m, at);
  if (msg.role !== 'user' && msg.role !== 'assistant') throw invalidRequest("message role must be 'user' or 'assistant'", `${at}.role`);
  if (!Array.isArray(msg.content)) throw invalidRequest('message content must be an array of content blocks', `${at}.content`);
  const blocks = msg.content.map((c, j) => obj(c, `${at}.content[${j}]`));
  return msg.role === 'user' ? userMessages(blocks, at) : [assistantMessage(blocks, at)];
}

/** Tool results become `tool` messages, ahead of whatever else the user turn says. */
function userMessages(blocks: Wire[], param: string): Message[] {
  const tools: Message[] = [];
  const parts: ContentPart[] = [];
  blocks.forEach((block, j) => {
    const at = `${param}.content[${j}]`;
    if (block.toolResult !== undefined) tools.push(toolMessage(obj(block.toolResult, `${at}.toolResult`), `${at}.toolResult`));
    else parts.push(...contentParts(block, at));
  });
  return parts.length > 0 ? [...tools, { role: 'user', content: parts }] : tools;
}

/** Text, image and document blocks: what user turns may carry. */
function contentParts(block: Wire, at: string): ContentPart[] {
  if (typeof block.text === 'string') return block.text ? [{ type: 'text', text: block.text }] : [];
  if (block.image !== undefined) return [imagePart(obj(block.image, `${at}.image`), `${at}.image`)];
  if (block.document !== undefined) return [documentPart(obj(block.document, `${at}.document`), `${at}.document`)];
  if (block.guardContent !== undefined) return [{ type: 'text', text: guardText(block.guardContent, `${at}.guardContent`) }];
  if (block.cachePoint !== undefined) return [];
  throw unsupported(block, at);
}

function imagePart(image: Wire, at: string): ContentPart {
  // Own keys only, of a string: `constructor` or an object with a broken toString must not pass or throw.
  const mediaType = typeof image.format === 'string' && Object.hasOwn(IMAGE_TYPES, image.format) ? IMAGE_TYPES[image.format] : undefined;
  if (!mediaType) throw invalidRequest('image format must be one of png, jpeg, gif, webp', `${at}.format`);
  return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${sourceBytes(image.source, `${at}.source`)}` } };
}

/** Binary documents become file parts; text ones (txt, md, csv, html) their text. */
function documentPart(doc: Wire, at: string): ContentPart {
  const format = typeof doc.format === 'string' ? doc.format : JSON.stringify(doc.format);
  const data = sourceBytes(doc.source, `${at}.source`);
  if (TEXT_DOCUMENTS.has(format)) return { type: 'text', text: Buffer.from(data, 'base64').toString('utf8') };
  const mediaType = Object.hasOwn(BINARY_DOCUMENTS, format) ? BINARY_DOCUMENTS[format] : undefined;
  if (!mediaType) throw invalidRequest(`unsupported document format '${format}'`, `${at}.format`);
  const file: { file_data: string; filename?: string } = { file_data: `data:${mediaType};base64,${data}` };
  if (typeof doc.name === 'string' && doc.name) file.filename = `${doc.name}.${format}`;
  return { type: 'file', file };
}

/** The base64 of an inline source; S3 locations would need the caller's AWS access, which other providers lack. */
function sourceBytes(source: unknown, at: string): string {
  const s = obj(source, at);
  if (typeof s.bytes === 'string') return s.bytes;
  if (s.s3Location !== undefined) throw invalidRequest('s3Location sources are not supported through the gateway; send the bytes inline', `${at}.s3Location`);
  throw invalidRequest('source.bytes is required', `${at}.bytes`);
}

function toolMessage(result: Wire, at: string): Message {
  const id = str(result.toolUseId, `${at}.toolUseId`);
  if (!Array.isArray(result.content)) throw invalidRequest('toolResult content must be an array', `${at}.content`);
  const texts = result.content.map((c, k) => {
    const item = obj(c, `${at}.content[${k}]`);
    if (typeof item.text === 'string') return item.text;
    if (item.json !== undefined) return JSON.stringify(item.json);
    throw invalidRequest('toolResult content may hold text and json blocks only', `${at}.content[${k}]`);
  });
  return { role: 'tool', tool_call_id: id, content: texts.join('') };
}

/** Reasoning first (as reasoning_details), then text, then tool uses: the order Bedrock produces. */
function assistantMessage(blocks: Wire[], param: string): Message {
  const texts: string[] = [];
  const thoughts: string[] = [];
  const details: ReasoningDetail[] = [];
  const toolCalls: ToolCall[] = [];
  blocks.forEach((block, j) => {
    const at = `${param}.content[${j}]`;
    if (typeof block.text === 'string') texts.push(block.text);
    else if (block.toolUse !== undefined) {
      const use = obj(block.toolUse, `${at}.toolUse`);
      const input = use.input ?? {};
      if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalidRequest('toolUse input must be an object', `${at}.toolUse.input`);
      toolCalls.push({
        id: str(use.toolUseId, `${at}.toolUse.toolUseId`),
        type: 'function',
        function: { name: str(use.name, `${at}.toolUse.name`), arguments: JSON.stringify(input) },
      });
    } else if (block.reasoningContent !== undefined) {
      const r = obj(block.reasoningContent, `${at}.reasoningContent`);
      if (r.reasoningText !== undefined) {
        const rt = obj(r.reasoningText, `${at}.reasoningContent.reasoningText`);
        const text = str(rt.text, `${at}.reasoningContent.reasoningText.text`);
        thoughts.push(text);
        const detail: ReasoningDetail = { type: 'reasoning.text', text, index: details.length };
        if (typeof rt.signature === 'string') detail.signature = rt.signature;
        details.push(detail);
      } else if (typeof r.redactedContent === 'string') {
        details.push({ type: 'reasoning.encrypted', data: r.redactedContent, index: details.length });
      }
    } else if (block.cachePoint === undefined) {
      throw unsupported(block, at);
    }
  });
  const message: Message = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thoughts.length > 0) message.reasoning = thoughts.join('');
  if (details.length > 0) message.reasoning_details = details;
  return message;
}

// ---- tools ---------------------------------------------------------------------------------

function convertTool(tool: unknown, i: number): Tool[] {
  const t = obj(tool, `toolConfig.tools[${i}]`);
  if (t.cachePoint !== undefined) return [];
  const at = `toolConfig.tools[${i}].toolSpec`;
  const spec = obj(t.toolSpec, at);
  const schema = obj(spec.inputSchema, `${at}.inputSchema`).json;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw invalidRequest('inputSchema.json must be a JSON schema object', `${at}.inputSchema.json`);
  }
  const fn: Tool['function'] = { name: str(spec.name, `${at}.name`), parameters: schema as Record<string, unknown> };
  if (typeof spec.description === 'string') fn.description = spec.description;
  return [{ type: 'function', function: fn }];
}

function convertToolChoice(choice: Wire): ToolChoice {
  if (choice.auto !== undefined) return 'auto';
  if (choice.any !== undefined) return 'required';
  if (choice.tool !== undefined) return { type: 'function', function: { name: str(obj(choice.tool, 'toolConfig.toolChoice.tool').name, 'toolConfig.toolChoice.tool.name') } };
  throw invalidRequest('toolChoice must be one of auto, any, tool', 'toolConfig.toolChoice');
}

// ---- helpers -------------------------------------------------------------------------------

function guardText(guard: unknown, at: string): string {
  const g = obj(guard, at);
  return str(obj(g.text, `${at}.text`).text, `${at}.text.text`);
}

function obj(v: unknown, param: string): Wire {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw invalidRequest(param ? `${param} must be an object` : 'request body must be a JSON object', param || undefined);
  }
  return v as Wire;
}

function str(v: unknown, param: string): string {
  if (typeof v !== 'string') throw invalidRequest(`${param} must be a string`, param);
  return v;
}

function num(v: unknown, param: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidRequest(`${param} must be a number`, param);
  return v;
}

function int(v: unknown, param: string, min: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw invalidRequest(`${param} must be an integer of at least ${min}`, param);
  return v;
}

function unsupported(block: Wire, at: string) {
  const kind = Object.keys(block)[0];
  return invalidRequest(kind ? `content block '${kind}' is not supported here` : 'empty content block', at);
}
