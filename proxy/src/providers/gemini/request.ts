// Unified chat request → Gemini generateContent body. The model goes in the URL, not the body.
import type { ChatRequest, ContentPart, Message, ReasoningDetail, ToolCall } from '../../unified/chat.ts';
import { invalidRequest } from '../../unified/errors.ts';
import { audioPart, filePart, imagePart } from './media.ts';
import { toGeminiToolConfig, toGeminiTools, toGenerationConfig } from './options.ts';
import type { GeminiContent, GeminiGenerateContentRequest, GeminiPart, GeminiRole } from './types.ts';

export function toGeminiRequest(req: ChatRequest): GeminiGenerateContentRequest {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  req.messages.forEach((msg, i) => {
    switch (msg.role) {
      case 'system':
      case 'developer': {
        const text = textOf(msg.content);
        if (text) system.push({ text });
        break;
      }
      case 'user':
        appendTurn(contents, 'user', userParts(msg.content, i));
        break;
      case 'assistant':
        appendTurn(contents, 'model', modelParts(msg, i));
        break;
      case 'tool':
        // Tool results are user-turn functionResponse parts; consecutive ones merge into one turn.
        appendTurn(contents, 'user', [functionResponsePart(req.messages, i)]);
        break;
    }
  });

  const body: GeminiGenerateContentRequest = { contents };
  if (system.length) body.systemInstruction = { parts: system };
  const tools = toGeminiTools(req.tools);
  if (tools) body.tools = tools;
  const toolConfig = toGeminiToolConfig(req.tool_choice);
  if (toolConfig) body.toolConfig = toolConfig;
  const generationConfig = toGenerationConfig(req);
  if (generationConfig) body.generationConfig = generationConfig;
  return body;
}

/** Gemini wants alternating turns: a turn with the same role as the previous one is merged into it. */
function appendTurn(contents: GeminiContent[], role: GeminiRole, parts: GeminiPart[]): void {
  if (!parts.length) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function userParts(content: Message['content'], i: number): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!content) return [];
  return content.flatMap((part, j) => {
    const converted = userPart(part);
    if (converted === undefined) throw invalidRequest('file part needs file_data or file_id', `messages[${i}].content[${j}].file`);
    return converted === null ? [] : [converted];
  });
}

/** null: nothing to send (empty text); undefined: unusable part. */
function userPart(part: ContentPart): GeminiPart | null | undefined {
  switch (part.type) {
    case 'text':
      return part.text ? { text: part.text } : null;
    case 'image_url':
      return imagePart(part.image_url.url);
    case 'input_audio':
      return audioPart(part.input_audio.data, part.input_audio.format);
    case 'file':
      return filePart(part.file);
  }
}

/**
 * Assistant turn. Thought signatures come back from the gateway's own responses as reasoning_details
 * and must be replayed on the part they arrived on (Gemini 3 rejects function calls without them):
 * - `reasoning.text` with a signature → a thought part carrying it;
 * - `reasoning.encrypted` whose id is one of this message's tool call ids → that functionCall part;
 * - any other `reasoning.encrypted` → the text part (the model signs the last part of a text answer).
 * Signatures cannot be told apart by origin (the unified detail has no `format`), so details produced
 * by another provider are replayed too.
 */
function modelParts(msg: Message, i: number): GeminiPart[] {
  const calls = msg.tool_calls ?? [];
  const details = msg.reasoning_details ?? [];
  const callIds = new Set(calls.map((call) => call.id));
  const parts: GeminiPart[] = [];

  for (const detail of details) {
    if (detail.type !== 'reasoning.text' || !detail.signature) continue;
    parts.push({ ...(detail.text && { text: detail.text }), thought: true, thoughtSignature: detail.signature });
  }

  const text = textOf(msg.content);
  if (text) {
    const signature = encryptedData(details, (d) => d.id === undefined || !callIds.has(d.id));
    parts.push(signature ? { text, thoughtSignature: signature } : { text });
  }

  calls.forEach((call, j) => {
    const args = parseArguments(call.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`);
    const signature =
      encryptedData(details, (d) => d.id === call.id) ?? compatSignature(call) ?? (j === 0 ? SKIP_SIGNATURE : undefined);
    parts.push({ functionCall: { name: call.function.name, args }, ...(signature && { thoughtSignature: signature }) });
  });
  return parts;
}

/**
 * Gemini 3 rejects a step whose first functionCall has no signature. Calls made by another model, or
 * replayed by a client that dropped reasoning_details, get the placeholder value Google documents
 * for exactly that case (history from another model, or injected calls).
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/** Gemini's own OpenAI-compatible endpoint carries the signature on the tool call itself. */
function compatSignature(call: ToolCall): string | undefined {
  const signature = (call as ToolCall & { extra_content?: { google?: { thought_signature?: unknown } } }).extra_content?.google
    ?.thought_signature;
  return typeof signature === 'string' && signature ? signature : undefined;
}

function encryptedData(details: ReasoningDetail[], match: (d: ReasoningDetail) => boolean): string | undefined {
  return details.find((d) => d.type === 'reasoning.encrypted' && d.data && match(d))?.data;
}

function parseArguments(json: string, param: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw invalidRequest('tool call arguments are not valid JSON', param);
  }
  if (!isObject(parsed)) throw invalidRequest('tool call arguments must be a JSON object', param);
  return parsed;
}

function functionResponsePart(messages: Message[], i: number): GeminiPart {
  const msg = messages[i];
  const name = toolNameFor(messages, i) ?? msg.name;
  if (!name) {
    throw invalidRequest(`no earlier assistant tool call has id '${msg.tool_call_id ?? ''}'`, `messages[${i}].tool_call_id`);
  }
  return { functionResponse: { name, response: toolResponse(textOf(msg.content)) } };
}

/** The name of the closest earlier call with this id (ids may repeat across turns). */
function toolNameFor(messages: Message[], i: number): string | undefined {
  const id = messages[i].tool_call_id;
  if (id === undefined) return undefined;
  for (let k = i - 1; k >= 0; k--) {
    const call = messages[k].tool_calls?.find((c) => c.id === id);
    if (call) return call.function.name;
  }
  return undefined;
}

/** `response` must be a JSON object: a JSON-object result is passed as is, anything else wrapped. */
function toolResponse(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // plain-text result
  }
  return { content: text };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
