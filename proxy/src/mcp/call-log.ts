// MCP tool call records (GET /api/mcp-logs): arguments, outcome and duration of each call, in the
// reference's MCPToolLogEntry shape. Kept in a bounded ring in this process (the newest
// MAX_RECORDS): tool calls are audited per replica, not persisted across restarts.
import { randomUUID } from 'node:crypto';

const MAX_RECORDS = 5_000;

export interface McpCallRecord {
  id: string;
  timestamp: string;
  client: string;
  tool: string;
  arguments: Record<string, unknown>;
  status: 'success' | 'error';
  result?: string;
  error?: string;
  latency_ms: number;
  source: string;
  virtual_key_id?: string;
  request_id?: string;
}

export interface McpLogFilter {
  tool_names?: string[];
  server_labels?: string[];
  status?: string[];
  virtual_key_ids?: string[];
  llm_request_ids?: string[];
  start?: number;
  end?: number;
  min_latency?: number;
  max_latency?: number;
  content_search?: string;
}

export class McpCallLog {
  readonly #records: McpCallRecord[] = [];

  add(r: Omit<McpCallRecord, 'id' | 'timestamp'>): void {
    this.#records.push({ id: randomUUID(), timestamp: new Date().toISOString(), ...r });
    if (this.#records.length > MAX_RECORDS) this.#records.splice(0, this.#records.length - MAX_RECORDS);
  }

  get size(): number {
    return this.#records.length;
  }

  search(f: McpLogFilter): McpCallRecord[] {
    const q = f.content_search?.toLowerCase();
    return this.#records.filter((r) => {
      if (f.tool_names && !f.tool_names.includes(r.tool)) return false;
      if (f.server_labels && !f.server_labels.includes(r.client)) return false;
      if (f.status && !f.status.includes(r.status)) return false;
      if (f.virtual_key_ids && (r.virtual_key_id === undefined || !f.virtual_key_ids.includes(r.virtual_key_id))) return false;
      if (f.llm_request_ids && (r.request_id === undefined || !f.llm_request_ids.includes(r.request_id))) return false;
      const t = Date.parse(r.timestamp);
      if (f.start !== undefined && t < f.start) return false;
      if (f.end !== undefined && t > f.end) return false;
      if (f.min_latency !== undefined && r.latency_ms < f.min_latency) return false;
      if (f.max_latency !== undefined && r.latency_ms > f.max_latency) return false;
      if (q && !`${JSON.stringify(r.arguments)}\n${r.result ?? ''}\n${r.error ?? ''}`.toLowerCase().includes(q)) return false;
      return true;
    });
  }

  filterData(): { tool_names: string[]; server_labels: string[]; virtual_key_ids: string[] } {
    const uniq = (xs: (string | undefined)[]) => [...new Set(xs.filter((x): x is string => x !== undefined))].sort();
    return {
      tool_names: uniq(this.#records.map((r) => r.tool)),
      server_labels: uniq(this.#records.map((r) => r.client)),
      virtual_key_ids: uniq(this.#records.map((r) => r.virtual_key_id)),
    };
  }
}

export function stats(records: readonly McpCallRecord[]): { total_executions: number; success_rate: number; average_latency: number; total_cost: number } {
  const n = records.length;
  const ok = records.filter((r) => r.status === 'success').length;
  const latency = records.reduce((s, r) => s + r.latency_ms, 0);
  return { total_executions: n, success_rate: n ? (ok / n) * 100 : 0, average_latency: n ? latency / n : 0, total_cost: 0 };
}
