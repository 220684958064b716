// The MCP tool call log table (mcp/call-store.ts), in the request-log store's database so every
// replica sharing the store sees every replica's tool calls in /api/mcp-logs. Version 5: version 4
// is left to the request-log indexes being added alongside.
import type { Migration } from './driver.ts';

export const MCP_TOOL_LOGS_MIGRATION: Migration = {
  version: 5,
  description: 'MCP tool call logs (/api/mcp-logs), shared by the replicas using this store',
  statements: (d) => [
    `CREATE TABLE mcp_tool_logs (
      id TEXT PRIMARY KEY,
      timestamp BIGINT NOT NULL,
      client TEXT NOT NULL,
      tool TEXT NOT NULL,
      arguments TEXT,
      status TEXT NOT NULL,
      result TEXT,
      error TEXT,
      latency ${d.double} NOT NULL,
      cost ${d.double} NOT NULL DEFAULT 0,
      source TEXT NOT NULL,
      virtual_key_id TEXT,
      request_id TEXT
    )`,
    // (timestamp, id) serves the default newest-first page; the others the /api/mcp-logs filters.
    'CREATE INDEX mcp_tool_logs_time ON mcp_tool_logs (timestamp, id)',
    'CREATE INDEX mcp_tool_logs_tool_time ON mcp_tool_logs (tool, timestamp)',
    'CREATE INDEX mcp_tool_logs_client_time ON mcp_tool_logs (client, timestamp)',
    'CREATE INDEX mcp_tool_logs_status_time ON mcp_tool_logs (status, timestamp)',
    'CREATE INDEX mcp_tool_logs_vk_time ON mcp_tool_logs (virtual_key_id, timestamp)',
    'CREATE INDEX mcp_tool_logs_request ON mcp_tool_logs (request_id)',
  ],
};
