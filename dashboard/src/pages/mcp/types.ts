// Shapes of /api/mcp and /api/mcp-logs answers (proxy/src/api/mcp.ts), as the MCP page reads them.

export const CONNECTION_TYPES = ['http', 'sse', 'stdio', 'websocket'] as const;

export interface McpClientConfig {
  client_id: string;
  name: string;
  connection_type: (typeof CONNECTION_TYPES)[number];
  connection_string?: string;
  auth_type?: 'none' | 'headers' | 'oauth';
  headers?: Record<string, string>;
  stdio_config?: { command: string; args?: string[]; envs?: string[] };
  websocket_config?: { url: string };
  http_config?: { url: string };
  tools_to_execute?: string[];
  tools_to_auto_execute?: string[];
  tool_sync_interval?: string;
  is_code_mode_client?: boolean;
  is_ping_available?: boolean;
  allow_on_all_virtual_keys?: boolean;
  allow_without_virtual_key?: boolean;
}

export interface McpTool {
  name: string;
  description?: string;
  parameters?: unknown;
}

export interface McpClient {
  config: McpClientConfig;
  tools: McpTool[];
  /** connected, disconnected or error; `connecting` while the first attempt is under way. */
  state: string;
  connecting?: boolean;
  error?: string;
  vk_configs: { virtual_key_id: string; virtual_key_name: string; tools_to_execute: string[] }[];
  managed_by?: string;
  source?: string;
}

export interface McpLog {
  id: string;
  llm_request_id?: string;
  timestamp: string;
  tool_name: string;
  server_label: string;
  virtual_key_id?: string;
  arguments: unknown;
  result?: { text: string };
  error_details?: { error: { message: string } };
  latency: number;
  cost: number;
  status: string;
  source?: string;
}

export interface McpLogPage {
  logs: McpLog[];
  pagination: { limit: number; offset: number; sort_by: string; order: string; total_count: number };
  stats: { total_executions: number; success_rate: number; average_latency: number; total_cost: number };
  has_logs: boolean;
}

export interface McpFilterData {
  tool_names: string[];
  server_labels: string[];
  virtual_keys: { id: string }[];
}

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
