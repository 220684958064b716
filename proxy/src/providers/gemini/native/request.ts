// Native Gemini generateContent body (as sent by @google/genai and the REST API) → unified chat
// request: the inverse of ../request.ts, so a Gemini client can reach any provider. Thought
// signatures become reasoning_details in exactly the shape ../request.ts replays them from.
import type { ChatRequest, ContentPart, Message, Tool, ToolChoice } from '../../../unified/chat.ts';
import { invalidRequest } from '../../../unified/errors.ts';
import { setOwn } from '../../../unified/own-fields.ts';
import { digestParts } from '../parts.ts';
import type {
  GeminiBlob,
  GeminiContent,
  GeminiFileData,
  GeminiFunctionResponse,
  GeminiGenerateContentRequest,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiTool,
  GeminiToolConfig,
} from '../types.ts';

/** A function call of the latest model turn, waiting for its functionResponse. */
interface PendingCall {
  id: string;
  name: string;
  answered: boolean;
}

/**
 * @param model the model named in the URL (`models/{model}:generateContent`), possibly `provider/model`
 */
export function fromGeminiRequest(req: GeminiGenerateContentRequest, model: string): ChatRequest {
  if (!isPlainObject(req)) throw invalidRequest('request body must be a JSON object');
  if (!Array.isArray(req.contents)) throw invalidRequest('contents must be an array', 'contents');
  if (req.cachedContent !== undefined) {
    throw invalidRequest('cachedContent is not supported by the gateway; send the content inline', 'cachedContent');
  }

  const messages: Message[] = systemMessages(req.systemInstruction);
  let pending: PendingCall[] = [];
  req.contents.forEach((content, i) => {
    const parts = partsOf(content, `contents[${i}]`);
    const role = (content as GeminiContent).role ?? 'user';
    if (role === 'model') {
      const message = modelMessage(parts, i);
      pending = (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, answered: false }));
      messages.push(message);
    } else if (role === 'user' || (role as string) === 'function') {
      messages.push(...userMessages(parts, i, pending));
    } else {
      // String() of a client object can itself throw (a `toString` member that is not a function).
      throw invalidRequest(`unknown role ${JSON.stringify(role).slice(0, 100)}; expected 'user' or 'model'`, `contents[${i}].role`);
    }
  });
  if (!messages.length) throw invalidRequest('contents must not be empty', 'contents');

  const out: ChatRequest = { model: model.replace(/^models\//, ''), messages };
  const tools = fromGeminiTools(req.tools);
  const choice = fromToolConfig(req.toolConfig);
  if (tools) out.tools = choice?.allowed ? tools.filter((t) => choice.allowed?.includes(t.function.name)) : tools;
  if (choice?.choice) out.tool_choice = choice.choice;
  Object.assign(out, fromGenerationConfig(req.generationConfig));
  return out;
}

function systemMessages(system: GeminiContent | string | undefined): Message[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system ? [{ role: 'system', content: system }] : [];
  return partsOf(system, 'systemInstruction').flatMap((part, j): Message[] => {
    if (typeof part.text !== 'string' || part.thought) throw unsupportedPart(part, `systemInstruction.parts[${j}]`);
    return part.text ? [{ role: 'system', content: part.text }] : [];
  });
}

function partsOf(content: unknown, where: string): GeminiPart[] {
  if (!isObject(content) || !Array.isArray(content.parts)) throw invalidRequest('content must be an object with a parts array', where);
  content.parts.forEach((part, j) => {
    if (!isObject(part)) throw invalidRequest('part must be an object', `${where}.parts[${j}]`);
  });
  return content.parts as GeminiPart[];
}

// ---- user turns ----

/** functionResponse parts become tool messages (first: they must follow the calls), the rest one user message. */
function userMessages(parts: GeminiPart[], i: number, pending: PendingCall[]): Message[] {
  const tools: Message[] = [];
  const content: ContentPart[] = [];
  parts.forEach((part, j) => {
    const where = `contents[${i}].parts[${j}]`;
    if (part.functionResponse) tools.push(toolMessage(part.functionResponse, pending, i, j, where));
    else if (typeof part.text === 'string' && !part.thought) {
      if (part.text) content.push({ type: 'text', text: part.text });
    } else if (part.inlineData) content.push(inlineContent(part.inlineData, where));
    else if (part.fileData) content.push(fileContent(part.fileData, where));
    else if (!(isSignatureOnly(part) && part.thoughtSignature)) throw unsupportedPart(part, where);
  });
  if (!content.length) return tools;
  const single = content.length === 1 && content[0].type === 'text' ? content[0].text : undefined;
  return [...tools, { role: 'user', content: single ?? content }];
}

/**
 * The tool_call_id is the id given to the matching call of the latest model turn: by id when the
 * response carries one that matches, else the first unanswered call with the same name. A response
 * answering no call keeps its name so a Gemini upstream can still pair it.
 */
function toolMessage(fr: GeminiFunctionResponse, pending: PendingCall[], i: number, j: number, where: string): Message {
  if (!isPlainObject(fr) || typeof fr.name !== 'string') throw invalidRequest('functionResponse needs a name', `${where}.functionResponse`);
  const response = fr.response ?? {};
  if (!isObject(response)) throw invalidRequest('functionResponse.response must be a JSON object', `${where}.functionResponse.response`);
  const call =
    (fr.id ? pending.find((c) => !c.answered && c.id === fr.id) : undefined) ??
    pending.find((c) => !c.answered && c.name === fr.name);
  const content = JSON.stringify(response);
  if (call) {
    call.answered = true;
    return { role: 'tool', tool_call_id: call.id, content };
  }
  return { role: 'tool', tool_call_id: fr.id || `call_${i}_${j}`, name: fr.name, content };
}

function inlineContent(blob: GeminiBlob, where: string): ContentPart {
  if (!isPlainObject(blob) || typeof blob.data !== 'string' || typeof blob.mimeType !== 'string') {
    throw invalidRequest('inlineData needs mimeType and data', `${where}.inlineData`);
  }
  const mime = blob.mimeType.toLowerCase();
  if (mime.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mime};base64,${blob.data}` } };
  if (mime.startsWith('audio/')) return { type: 'input_audio', input_audio: { data: blob.data, format: audioFormat(mime) } };
  // Documents, video, plain text: OpenAI's file part carries any inline file as a data URL.
  return { type: 'file', file: { file_data: `data:${mime};base64,${blob.data}` } };
}

/** audio/<subtype> → the unified `format` (OpenAI's names where they differ; ../media.ts maps back). */
function audioFormat(mime: string): string {
  const subtype = mime.slice('audio/'.length).split(';', 1)[0];
  if (subtype === 'mpeg' || subtype === 'mpeg3' || subtype === 'x-mp3') return 'mp3';
  if (subtype === 'wave' || subtype === 'x-wav' || subtype === 'vnd.wave') return 'wav';
  return subtype;
}

/** Images (or untyped URIs) as image_url; other files (PDFs, videos, uploaded files) by reference. */
function fileContent(file: GeminiFileData, where: string): ContentPart {
  if (!isPlainObject(file) || typeof file.fileUri !== 'string' || !file.fileUri) {
    throw invalidRequest('fileData needs a fileUri', `${where}.fileData`);
  }
  if (!file.mimeType || file.mimeType.toLowerCase().startsWith('image/')) {
    return { type: 'image_url', image_url: { url: file.fileUri } };
  }
  return { type: 'file', file: { file_id: file.fileUri } };
}

// ---- model turns ----

/** Text, thoughts and function calls, digested exactly as a Gemini answer is (ids `call_<turn>_<n>`). */
function modelMessage(parts: GeminiPart[], i: number): Message {
  parts.forEach((part, j) => {
    const where = `contents[${i}].parts[${j}]`;
    if (part.functionCall) {
      if (!isPlainObject(part.functionCall) || typeof part.functionCall.name !== 'string') {
        throw invalidRequest('functionCall needs a name', `${where}.functionCall`);
      }
      if (part.functionCall.args !== undefined && !isPlainObject(part.functionCall.args)) {
        throw invalidRequest('functionCall.args must be a JSON object', `${where}.functionCall.args`);
      }
    } else if (typeof part.text !== 'string' && !isSignatureOnly(part)) throw unsupportedPart(part, where);
  });
  const digest = digestParts(parts, i);
  const hasCalls = digest.toolCalls.length > 0;
  const message: Message = { role: 'assistant', content: hasCalls ? digest.text || null : (digest.text ?? '') };
  if (hasCalls) message.tool_calls = digest.toolCalls;
  if (digest.reasoning !== undefined) message.reasoning = digest.reasoning;
  if (digest.details.length) message.reasoning_details = digest.details;
  return message;
}

/** A part with no data field at all (e.g. only a stray signature) carries nothing to translate. */
function isSignatureOnly(part: GeminiPart): boolean {
  return DATA_FIELDS.every((field) => part[field] === undefined);
}

const DATA_FIELDS = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
] as const satisfies ReadonlyArray<keyof GeminiPart>;

function unsupportedPart(part: GeminiPart, where: string): Error {
  if (part.thought) return invalidRequest('thought parts are only valid in model turns', where);
  const kind = Object.keys(part).find((k) => k !== 'thoughtSignature' && k !== 'thought') ?? 'empty part';
  return invalidRequest(`part '${kind}' is not supported here`, where);
}

// ---- tools and options ----

function fromGeminiTools(tools: GeminiTool[] | undefined): Tool[] | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) throw invalidRequest('tools must be an array', 'tools');
  const out = tools.flatMap((tool, i) => {
    if (!isPlainObject(tool)) throw invalidRequest('tool must be an object', `tools[${i}]`);
    const other = Object.keys(tool).find((k) => k !== 'functionDeclarations');
    if (other) {
      throw invalidRequest(`tool '${other}' is not supported by the gateway; only functionDeclarations are`, `tools[${i}].${other}`);
    }
    const declarations = tool.functionDeclarations ?? [];
    if (!Array.isArray(declarations)) throw invalidRequest('functionDeclarations must be an array', `tools[${i}].functionDeclarations`);
    return declarations.map((fn, j): Tool => {
      if (!isPlainObject(fn) || typeof fn.name !== 'string' || !fn.name) {
        throw invalidRequest('function declaration needs a name', `tools[${i}].functionDeclarations[${j}]`);
      }
      const parameters = fn.parametersJsonSchema ?? (fn.parameters ? toJsonSchema(fn.parameters) : undefined);
      return {
        type: 'function',
        function: {
          name: fn.name,
          ...(fn.description !== undefined && { description: fn.description }),
          ...(isObject(parameters) && { parameters }),
        },
      };
    });
  });
  return out.length ? out : undefined;
}

/** `allowed`: ANY restricted to several names (unified tool_choice names one at most), applied by filtering tools. */
function fromToolConfig(config: GeminiToolConfig | undefined): { choice?: ToolChoice; allowed?: string[] } | undefined {
  const fcc = config?.functionCallingConfig;
  if (!fcc?.mode) return undefined;
  switch (fcc.mode) {
    case 'AUTO':
    case 'VALIDATED':
      return { choice: 'auto' };
    case 'NONE':
      return { choice: 'none' };
    case 'ANY': {
      const names = fcc.allowedFunctionNames ?? [];
      if (names.length === 1) return { choice: { type: 'function', function: { name: names[0] } } };
      return names.length ? { choice: 'required', allowed: names } : { choice: 'required' };
    }
    default:
      return undefined;
  }
}

function fromGenerationConfig(config: GeminiGenerationConfig | undefined): Partial<ChatRequest> {
  if (config === undefined) return {};
  if (!isPlainObject(config)) throw invalidRequest('generationConfig must be an object', 'generationConfig');
  const out: Partial<ChatRequest> = {};
  if (config.temperature !== undefined) out.temperature = config.temperature;
  if (config.topP !== undefined) out.top_p = config.topP;
  if (config.maxOutputTokens !== undefined) out.max_tokens = config.maxOutputTokens;
  if (config.stopSequences?.length) out.stop = config.stopSequences;
  if (config.candidateCount !== undefined) out.n = config.candidateCount;
  if (config.seed !== undefined) out.seed = config.seed;
  if (config.presencePenalty !== undefined) out.presence_penalty = config.presencePenalty;
  if (config.frequencyPenalty !== undefined) out.frequency_penalty = config.frequencyPenalty;
  const format = responseFormat(config);
  if (format) out.response_format = format;
  const reasoning = fromThinkingConfig(config);
  if (reasoning) out.reasoning = reasoning;
  return out;
}

function responseFormat(config: GeminiGenerationConfig): Record<string, unknown> | undefined {
  const mime = config.responseMimeType;
  if (mime === undefined || mime === 'text/plain') return undefined;
  if (mime !== 'application/json') {
    throw invalidRequest(`responseMimeType ${JSON.stringify(mime)} is not supported by the gateway`, 'generationConfig.responseMimeType');
  }
  const schema = config.responseJsonSchema ?? (config.responseSchema ? toJsonSchema(config.responseSchema) : undefined);
  return isObject(schema) ? { type: 'json_schema', json_schema: { name: 'response', schema } } : { type: 'json_object' };
}

/** thinkingBudget → reasoning.max_tokens (-1, "dynamic", is the default: left out); thinkingLevel → effort. */
function fromThinkingConfig(config: GeminiGenerationConfig): ChatRequest['reasoning'] {
  const thinking = config.thinkingConfig;
  if (!thinking) return undefined;
  if (typeof thinking.thinkingBudget === 'number' && thinking.thinkingBudget >= 0) return { max_tokens: thinking.thinkingBudget };
  const level = thinking.thinkingLevel?.toLowerCase();
  if (level === 'minimal' || level === 'low' || level === 'medium' || level === 'high') return { effort: level };
  return undefined;
}

/**
 * Gemini's OpenAPI-subset Schema → JSON Schema: types are lower-cased (the SDK sends `OBJECT`,
 * `STRING`, …), `nullable` becomes a `null` type, `propertyOrdering` is dropped.
 */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') {
      const type = typeof value === 'string' ? value.toLowerCase() : value;
      if (type !== 'type_unspecified') out.type = type;
    } else if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toJsonSchema(sub)]));
    } else if (key === 'items' || key === 'anyOf') {
      out[key] = toJsonSchema(value);
    } else if (key !== 'nullable' && key !== 'propertyOrdering') {
      setOwn(out, key, value);
    }
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
  }
  return out;
}

/** Like isObject, for values already typed (a type guard would narrow their fields to unknown). */
function isPlainObject(value: unknown): boolean {
  return isObject(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
