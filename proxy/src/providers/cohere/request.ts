// Unified chat request -> Cohere v2 /chat body.
import type { ChatRequest, ContentPart, Message } from '../../unified/chat.ts';
import { invalidRequest } from '../../unified/errors.ts';
import type {
  CohereChatRequest, CohereMessage, CohereResponseFormat, CohereTextContent, CohereThinking, CohereTool, CohereUserContent,
} from './types.ts';

export function toCohereRequest(req: ChatRequest, model: string): CohereChatRequest {
  const out: CohereChatRequest = { model, messages: req.messages.map(toMessage) };
  const tools = toTools(req);
  if (tools) out.tools = tools;
  const choice = req.tool_choice;
  if (choice === 'none') out.tool_choice = 'NONE';
  else if (choice === 'required' || (typeof choice === 'object' && choice !== null)) out.tool_choice = 'REQUIRED';

  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens !== undefined) out.max_tokens = maxTokens;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.p = clamp(req.top_p, 0.01, 0.99);
  const topK = (req as { top_k?: unknown }).top_k;
  if (typeof topK === 'number' && Number.isInteger(topK)) out.k = clamp(topK, 0, 500);
  if (req.stop !== undefined) out.stop_sequences = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (req.seed !== undefined) out.seed = req.seed;
  // Cohere's penalties range over [0, 1]; OpenAI's over [-2, 2].
  if (req.frequency_penalty !== undefined) out.frequency_penalty = clamp(req.frequency_penalty, 0, 1);
  if (req.presence_penalty !== undefined) out.presence_penalty = clamp(req.presence_penalty, 0, 1);
  if (req.logprobs === true) out.logprobs = true;
  const format = toResponseFormat(req.response_format);
  if (format) out.response_format = format;
  const thinking = toThinking(req);
  if (thinking) out.thinking = thinking;
  return out;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

function toMessage(m: Message, i: number): CohereMessage {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textOnly(m.content, i) };
    case 'user':
      return { role: 'user', content: userContent(m.content, i) };
    case 'assistant': {
      const msg: Extract<CohereMessage, { role: 'assistant' }> = { role: 'assistant' };
      const text = m.content === null || m.content === undefined ? '' : textOnly(m.content, i);
      if (typeof text === 'string' ? text !== '' : text.length > 0) msg.content = text;
      if (m.tool_calls && m.tool_calls.length > 0) {
        msg.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
        if (m.reasoning) msg.tool_plan = m.reasoning;
      }
      return msg;
    }
    case 'tool':
      if (!m.tool_call_id) throw invalidRequest(`messages[${i}]: a tool message needs tool_call_id`, `messages[${i}].tool_call_id`);
      return { role: 'tool', tool_call_id: m.tool_call_id, content: textOnly(m.content ?? '', i) };
  }
}

function textOnly(content: Message['content'], i: number): string | CohereTextContent[] {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => {
    if (p.type !== 'text') throw unsupportedPart(p, i);
    return { type: 'text', text: p.text };
  });
}

function userContent(content: Message['content'], i: number): string | CohereUserContent[] {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((p): CohereUserContent => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      return { type: 'image_url', image_url: p.image_url.detail ? { url: p.image_url.url, detail: p.image_url.detail } : { url: p.image_url.url } };
    }
    throw unsupportedPart(p, i);
  });
}

function unsupportedPart(p: ContentPart, i: number) {
  return invalidRequest(`messages[${i}]: content part '${p.type}' is not supported by cohere`, `messages[${i}].content`);
}

function toTools(req: ChatRequest): CohereTool[] | undefined {
  let tools = req.tools;
  if (!tools || tools.length === 0) return undefined;
  // Cohere cannot force one named tool; offering only that tool with REQUIRED is the equivalent.
  const choice = req.tool_choice;
  if (typeof choice === 'object' && choice !== null) {
    tools = tools.filter((t) => t.function.name === choice.function.name);
    if (tools.length === 0) throw invalidRequest(`tool_choice names '${choice.function.name}', which is not in tools`, 'tool_choice');
  }
  return tools.map((t) => ({
    type: 'function',
    function: {
      name: t.function.name,
      ...(t.function.description !== undefined ? { description: t.function.description } : {}),
      parameters: t.function.parameters ?? { type: 'object', properties: {} },
    },
  }));
}

function toResponseFormat(f: Record<string, unknown> | undefined): CohereResponseFormat | undefined {
  if (!f) return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') {
    const js = f.json_schema as { schema?: Record<string, unknown> } | undefined;
    return js?.schema ? { type: 'json_object', json_schema: js.schema } : { type: 'json_object' };
  }
  return undefined;
}

function toThinking(req: ChatRequest): CohereThinking | undefined {
  const effort = req.reasoning?.effort ?? req.reasoning_effort;
  const budget = req.reasoning?.max_tokens;
  if (effort === 'none' || budget === 0) return { type: 'disabled' };
  if (budget !== undefined) return { type: 'enabled', token_budget: budget };
  if (effort !== undefined) return { type: 'enabled' };
  return undefined;
}
