// Unified chat request → the counting fields of a Responses request (input, tools, tool_choice,
// text format, reasoning), for OpenAI's token-count endpoint, which only speaks Responses. The
// inverse of request.ts for what the model sees; generation settings are not part of a count.
import type { ChatRequest, ContentPart, Message, Tool, ToolChoice } from '../chat.ts';
import { invalidRequest } from '../errors.ts';

type Item = Record<string, unknown>;

export function chatToResponsesInput(req: ChatRequest): Record<string, unknown> {
  const out: Record<string, unknown> = { input: req.messages.flatMap(toItems) };
  if (req.tools?.length) out.tools = req.tools.map(toResponsesTool);
  if (req.tool_choice !== undefined) out.tool_choice = toResponsesToolChoice(req.tool_choice);
  if (req.parallel_tool_calls !== undefined) out.parallel_tool_calls = req.parallel_tool_calls;
  const effort = req.reasoning_effort ?? req.reasoning?.effort;
  if (effort) out.reasoning = { effort };
  const format = textFormat(req.response_format);
  if (format) out.text = { format };
  return out;
}

function toItems(m: Message, i: number): Item[] {
  const at = `messages[${i}]`;
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      return [{ type: 'message', role: m.role, content: inputContent(m.content, `${at}.content`) }];
    case 'assistant': {
      const items: Item[] = [];
      const text = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
      // Reasoning is not replayable to OpenAI from another provider; the visible turn is what counts.
      if (text) items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
      for (const tc of m.tool_calls ?? []) {
        items.push({ type: 'function_call', call_id: tc.id, name: tc.function.name, arguments: tc.function.arguments });
      }
      return items;
    }
    case 'tool':
      return [{ type: 'function_call_output', call_id: m.tool_call_id ?? '', output: outputText(m.content) }];
  }
}

function inputContent(content: Message['content'], at: string): string | Item[] {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p, j) => inputPart(p, `${at}[${j}]`));
}

function inputPart(p: ContentPart, at: string): Item {
  switch (p.type) {
    case 'text':
      return { type: 'input_text', text: p.text };
    case 'image_url':
      return { type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' };
    case 'file': {
      const file: Item = { type: 'input_file' };
      if (p.file.file_data) file.file_data = p.file.file_data;
      if (p.file.file_id) file.file_id = p.file.file_id;
      if (p.file.filename) file.filename = p.file.filename;
      return file;
    }
    case 'input_audio':
      throw invalidRequest('audio input cannot be counted by a Responses-API provider', at);
  }
}

function outputText(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function toResponsesTool(t: Tool): Item {
  const tool: Item = { type: 'function', name: t.function.name, parameters: t.function.parameters ?? { type: 'object', properties: {} } };
  if (t.function.description !== undefined) tool.description = t.function.description;
  tool.strict = t.function.strict ?? false;
  return tool;
}

function toResponsesToolChoice(c: ToolChoice): unknown {
  return typeof c === 'string' ? c : { type: 'function', name: c.function.name };
}

function textFormat(rf: ChatRequest['response_format']): Item | undefined {
  if (rf?.type === 'json_object') return { type: 'json_object' };
  if (rf?.type !== 'json_schema') return undefined;
  const js = (rf.json_schema ?? {}) as Record<string, unknown>;
  return { type: 'json_schema', name: js.name ?? 'output', schema: js.schema ?? {}, ...(js.strict !== undefined ? { strict: js.strict } : {}) };
}
