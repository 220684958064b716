// MCP tools as the model sees them: OpenAI function tools named `<client>-<tool>` (the reference
// gateway's naming), with the MCP input schema as `parameters`. Tool names the model may send are
// limited to [A-Za-z0-9_-]{1,64} by the OpenAI API, so longer or odd names are left out.
import type { McpTool } from './connection.ts';

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

export function toolName(client: string, tool: string): string {
  return `${client}-${tool}`;
}

/** An MCP input schema as function parameters (an object schema, always). */
function parameters(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!schema || schema.type !== 'object') return { type: 'object', properties: {} };
  return schema.properties === undefined ? { ...schema, properties: {} } : schema;
}

export function chatTool(client: string, t: McpTool): ChatFunctionTool | undefined {
  const name = toolName(client, t.name);
  if (!FUNCTION_NAME.test(name)) return undefined;
  return { type: 'function', function: { name, ...(t.description !== undefined && { description: t.description }), parameters: parameters(t.inputSchema) } };
}

export function responsesTool(client: string, t: McpTool): ResponsesFunctionTool | undefined {
  const c = chatTool(client, t);
  return c && { type: 'function', name: c.function.name, ...(c.function.description !== undefined && { description: c.function.description }), parameters: c.function.parameters };
}
