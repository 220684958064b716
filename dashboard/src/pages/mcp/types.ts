// The MCP page's connection types and how it shows a client (answer shapes of /api/mcp and
// /api/mcp-logs: proxy/src/api/answers.ts).
import type { McpClientConfigView as McpClientConfig, McpClientView as McpClient } from '../../../../proxy/src/api/answers.ts';

export const CONNECTION_TYPES = ['http', 'sse', 'stdio', 'websocket'] as const;

/** Where a client connects, in one line (URL or command). */
export function targetOf(c: McpClientConfig): string {
  if (c.connection_type === 'stdio') return [c.stdio_config?.command, ...(c.stdio_config?.args ?? [])].filter(Boolean).join(' ');
  if (c.connection_type === 'websocket') return c.websocket_config?.url ?? '';
  return c.connection_string ?? c.http_config?.url ?? '';
}

/** The state as shown: `connecting` is the server's disconnected-with-first-attempt-under-way. */
export function stateOf(c: McpClient): string {
  return c.connecting ? 'connecting' : c.state;
}
