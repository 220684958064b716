// Native Cohere v2 requests (what the cohere-ai SDK sends to /cohere/v2/chat, /embed, /rerank) ->
// unified requests, so a Cohere client can reach any provider. The inverse of ../request.ts,
// ../embeddings.ts and ../rerank.ts. RAG `documents` are refused (no unified equivalent; the
// model would answer without them); Cohere-only knobs that tune delivery (citation_options,
// safety_mode, strict_tools, priority, return_prompt, k) are dropped.
import type { ChatRequest, ContentPart, Message, Tool, ToolCall } from '../../../unified/chat.ts';
import type { EmbeddingRequest } from '../../../unified/embeddings.ts';
import type { RerankRequest } from '../../../unified/rerank.ts';
import { invalidRequest } from '../../../unified/errors.ts';

type Wire = Record<string, unknown>;

export function fromCohereChatRequest(body: unknown): ChatRequest {
  const b = obj(body, '');
  const model = str(b.model, 'model');
  if (!model) throw invalidRequest('model: Field required', 'model');
  if (!Array.isArray(b.messages) || b.messages.length === 0) throw invalidRequest('messages must be a non-empty list', 'messages');
  if (b.documents !== undefined && b.documents !== null && !(Array.isArray(b.documents) && b.documents.length === 0)) {
    throw invalidRequest('documents (RAG) are not supported through the gateway; put the documents in a message instead', 'documents');
  }
  const out: ChatRequest = { model, messages: b.messages.map((m, i) => convertMessage(m, i)) };
  fallbacks(b, out);

  if (b.tools !== undefined && b.tools !== null) {
    if (!Array.isArray(b.tools)) throw invalidRequest('tools must be a list', 'tools');
    if (b.tools.length > 0) out.tools = b.tools.map((t, i) => convertTool(t, i));
  }
  if (b.tool_choice !== undefined && b.tool_choice !== null) {
    if (b.tool_choice === 'REQUIRED') out.tool_choice = 'required';
    else if (b.tool_choice === 'NONE') out.tool_choice = 'none';
    else throw invalidRequest("tool_choice must be 'REQUIRED' or 'NONE'", 'tool_choice');
  }
  if (b.max_tokens !== undefined && b.max_tokens !== null) out.max_tokens = int(b.max_tokens, 'max_tokens', 1);
  if (b.temperature !== undefined && b.temperature !== null) out.temperature = num(b.temperature, 'temperature');
  if (b.p !== undefined && b.p !== null) out.top_p = num(b.p, 'p');
  if (b.stop_sequences !== undefined && b.stop_sequences !== null) {
    if (!Array.isArray(b.stop_sequences) || !b.stop_sequences.every((s) => typeof s === 'string')) {
      throw invalidRequest('stop_sequences must be a list of strings', 'stop_sequences');
    }
    if (b.stop_sequences.length > 0) out.stop = b.stop_sequences as string[];
  }
  if (b.seed !== undefined && b.seed !== null) out.seed = int(b.seed, 'seed', Number.MIN_SAFE_INTEGER);
  if (b.frequency_penalty !== undefined && b.frequency_penalty !== null) out.frequency_penalty = num(b.frequency_penalty, 'frequency_penalty');
  if (b.presence_penalty !== undefined && b.presence_penalty !== null) out.presence_penalty = num(b.presence_penalty, 'presence_penalty');
  if (b.logprobs === true) out.logprobs = true;

  if (b.response_format !== undefined && b.response_format !== null) {
    const rf = obj(b.response_format, 'response_format');
    if (rf.type === 'json_object') {
      const schema = rf.json_schema;
      out.response_format =
        typeof schema === 'object' && schema !== null && !Array.isArray(schema)
          ? { type: 'json_schema', json_schema: { name: 'output', schema } }
          : { type: 'json_object' };
    } else if (rf.type !== 'text') {
      throw invalidRequest("response_format.type must be 'text' or 'json_object'", 'response_format.type');
    }
  }

  if (b.thinking !== undefined && b.thinking !== null) {
    const th = obj(b.thinking, 'thinking');
    if (th.type === 'enabled') {
      out.reasoning = th.token_budget !== undefined && th.token_budget !== null ? { max_tokens: int(th.token_budget, 'thinking.token_budget', 1) } : { effort: 'medium' };
    } else if (th.type !== 'disabled') {
      throw invalidRequest("thinking.type must be 'enabled' or 'disabled'", 'thinking.type');
    }
  }

  if (b.stream === true) {
    out.stream = true;
    // message-end reports usage, so the stream must always end with it.
    out.stream_options = { include_usage: true };
  }
  return out;
}

// ---- messages ------------------------------------------------------------------------------

function convertMessage(m: unknown, i: number): Message {
  const at = `messages[${i}]`;
  const msg = obj(m, at);
  switch (msg.role) {
    case 'system':
      return { role: 'system', content: textContent(msg.content, `${at}.content`) };
    case 'user':
      return { role: 'user', content: userContent(msg.content, `${at}.content`) };
    case 'assistant':
      return assistantMessage(msg, at);
    case 'tool':
      return { role: 'tool', tool_call_id: str(msg.tool_call_id, `${at}.tool_call_id`), content: toolContent(msg.content, `${at}.content`) };
    default:
      throw invalidRequest('message role must be one of system, user, assistant, tool', `${at}.role`);
  }
}

/** Strings stay strings (the form ../request.ts writes); text item lists stay parts. */
function textContent(content: unknown, at: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidRequest('content must be a string or a list of content items', at);
  return content.map((c, k) => {
    const item = obj(c, `${at}[${k}]`);
    if (item.type !== 'text') throw invalidRequest(`content item type ${JSON.stringify(item.type)} is not allowed here`, `${at}[${k}].type`);
    return { type: 'text', text: str(item.text, `${at}[${k}].text`) };
  });
}

function userContent(content: unknown, at: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidRequest('content must be a string or a list of content items', at);
  return content.map((c, k): ContentPart => {
    const item = obj(c, `${at}[${k}]`);
    if (item.type === 'text') return { type: 'text', text: str(item.text, `${at}[${k}].text`) };
    if (item.type === 'image_url') {
      const img = obj(item.image_url, `${at}[${k}].image_url`);
      const url = str(img.url, `${at}[${k}].image_url.url`);
      return { type: 'image_url', image_url: typeof img.detail === 'string' ? { url, detail: img.detail } : { url } };
    }
    throw invalidRequest(`content item type ${JSON.stringify(item.type)} is not supported here`, `${at}[${k}].type`);
  });
}

/** Tool results: text, or documents (their data as JSON), joined into the string every provider takes. */
function toolContent(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidRequest('content must be a string or a list of content items', at);
  return content
    .map((c, k) => {
      const item = obj(c, `${at}[${k}]`);
      if (item.type === 'text') return str(item.text, `${at}[${k}].text`);
      if (item.type === 'document') {
        const data = obj(item.document, `${at}[${k}].document`).data;
        return typeof data === 'string' ? data : JSON.stringify(data ?? {});
      }
      throw invalidRequest(`content item type ${JSON.stringify(item.type)} is not allowed in a tool message`, `${at}[${k}].type`);
    })
    .join('\n');
}

/** The tool plan (or thinking) is the model's reasoning before its answer or tool calls. */
function assistantMessage(msg: Wire, at: string): Message {
  const texts: string[] = [];
  const thoughts: string[] = [];
  if (typeof msg.content === 'string') texts.push(msg.content);
  else if (Array.isArray(msg.content)) {
    msg.content.forEach((c, k) => {
      const item = obj(c, `${at}.content[${k}]`);
      if (item.type === 'text') texts.push(str(item.text, `${at}.content[${k}].text`));
      else if (item.type === 'thinking') thoughts.push(str(item.thinking, `${at}.content[${k}].thinking`));
      else throw invalidRequest(`content item type ${JSON.stringify(item.type)} is not allowed here`, `${at}.content[${k}].type`);
    });
  } else if (msg.content !== undefined && msg.content !== null) {
    throw invalidRequest('content must be a string or a list of content items', `${at}.content`);
  }
  if (typeof msg.tool_plan === 'string' && msg.tool_plan) thoughts.push(msg.tool_plan);
  const message: Message = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (msg.tool_calls !== undefined && msg.tool_calls !== null) {
    if (!Array.isArray(msg.tool_calls)) throw invalidRequest('tool_calls must be a list', `${at}.tool_calls`);
    const calls = msg.tool_calls.map((c, k): ToolCall => {
      const call = obj(c, `${at}.tool_calls[${k}]`);
      const fn = obj(call.function, `${at}.tool_calls[${k}].function`);
      const args = fn.arguments;
      return {
        id: str(call.id, `${at}.tool_calls[${k}].id`),
        type: 'function',
        function: { name: str(fn.name, `${at}.tool_calls[${k}].function.name`), arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
      };
    });
    if (calls.length > 0) message.tool_calls = calls;
  }
  if (thoughts.length > 0) message.reasoning = thoughts.join('\n');
  return message;
}

function convertTool(tool: unknown, i: number): Tool {
  const at = `tools[${i}]`;
  const t = obj(tool, at);
  if (t.type !== 'function') throw invalidRequest("tool type must be 'function'", `${at}.type`);
  const fn = obj(t.function, `${at}.function`);
  const out: Tool['function'] = { name: str(fn.name, `${at}.function.name`) };
  if (typeof fn.description === 'string') out.description = fn.description;
  if (fn.parameters !== undefined && fn.parameters !== null) out.parameters = obj(fn.parameters, `${at}.function.parameters`);
  return { type: 'function', function: out };
}

// ---- embed and rerank ------------------------------------------------------------------------

/**
 * v2 /embed: `texts` only (image and mixed `inputs` have no unified form), float vectors only
 * (Cohere's quantised types are model-specific). `input_type` travels in the request for the
 * Cohere translator; the endpoint strips it for other providers.
 */
export function fromCohereEmbedRequest(body: unknown): EmbeddingRequest & { input_type?: string; truncate?: string } {
  const b = obj(body, '');
  const model = str(b.model, 'model');
  if (b.images !== undefined || b.inputs !== undefined) throw invalidRequest('only texts can be embedded through the gateway', b.images !== undefined ? 'images' : 'inputs');
  if (!Array.isArray(b.texts) || b.texts.length === 0 || !b.texts.every((t) => typeof t === 'string')) {
    throw invalidRequest('texts must be a non-empty list of strings', 'texts');
  }
  if (b.embedding_types !== undefined && b.embedding_types !== null) {
    if (!Array.isArray(b.embedding_types) || !b.embedding_types.every((t) => t === 'float')) {
      throw invalidRequest("embedding_types: only 'float' embeddings are available through the gateway", 'embedding_types');
    }
  }
  const out: EmbeddingRequest & { input_type?: string; truncate?: string } = { model, input: b.texts as string[] };
  fallbacks(b, out);
  if (b.output_dimension !== undefined && b.output_dimension !== null) out.dimensions = int(b.output_dimension, 'output_dimension', 1);
  if (typeof b.input_type === 'string') out.input_type = b.input_type;
  if (typeof b.truncate === 'string') out.truncate = b.truncate;
  return out;
}

/** v2 /rerank -> unified rerank (documents are strings in v2). */
export function fromCohereRerankRequest(body: unknown): RerankRequest {
  const b = obj(body, '');
  const model = str(b.model, 'model');
  const query = str(b.query, 'query');
  if (!query) throw invalidRequest('query must be a non-empty string', 'query');
  if (!Array.isArray(b.documents) || b.documents.length === 0) throw invalidRequest('documents must be a non-empty list', 'documents');
  const documents = b.documents.map((d, i) => {
    if (typeof d === 'string' && d) return d;
    // v1-style `{text}` objects are still sent by some clients.
    if (typeof d === 'object' && d !== null && typeof (d as Wire).text === 'string' && (d as Wire).text) return (d as { text: string }).text;
    throw invalidRequest('documents must be non-empty strings', `documents[${i}]`);
  });
  const out: RerankRequest = { model, query, documents };
  fallbacks(b, out);
  if (b.top_n !== undefined && b.top_n !== null) out.top_n = int(b.top_n, 'top_n', 1);
  if (b.max_tokens_per_doc !== undefined && b.max_tokens_per_doc !== null) out.max_tokens_per_doc = int(b.max_tokens_per_doc, 'max_tokens_per_doc', 1);
  return out;
}

// ---- helpers -------------------------------------------------------------------------------

/** The gateway's `fallbacks` extension, accepted in every native body. */
function fallbacks(b: Wire, out: { fallbacks?: string[] }): void {
  if (b.fallbacks === undefined) return;
  if (!Array.isArray(b.fallbacks) || !b.fallbacks.every((f) => typeof f === 'string' && f !== '')) {
    throw invalidRequest('fallbacks must be an array of provider/model names', 'fallbacks');
  }
  out.fallbacks = b.fallbacks as string[];
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
