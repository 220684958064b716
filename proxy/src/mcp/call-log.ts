// MCP tool call records (GET /api/mcp-logs): arguments, outcome, duration and cost of each call, in
// the reference's MCPToolLogEntry shape. Where a request-log store is configured they are kept there
// (call-store.ts), shared by the replicas using it; otherwise in a bounded ring in this process (the
// newest MAX_RECORDS), per replica and lost on restart.
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
  /** USD, from the client's tool_pricing (successful calls only). */
  cost: number;
  source: string;
  virtual_key_id?: string;
  request_id?: string;
}

export type NewMcpCall = Omit<McpCallRecord, 'id' | 'timestamp'>;

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

export interface McpLogPage {
  limit: number;
  offset: number;
  sortBy: 'timestamp' | 'latency' | 'cost';
  order: 'asc' | 'desc';
}

export interface McpLogStats {
  total_executions: number;
  success_rate: number;
  average_latency: number;
  total_cost: number;
}

export interface McpFilterData {
  tool_names: string[];
  server_labels: string[];
  virtual_key_ids: string[];
}

/** Where tool call records go and are searched: memory (this file) or the request-log store. */
export interface McpCallStore {
  readonly kind: 'memory' | 'sqlite' | 'postgres';
  /** Records a call; never awaited by the caller (a store write happens after the answer). */
  add(r: NewMcpCall): void;
  search(f: McpLogFilter, page: McpLogPage): Promise<{ records: McpCallRecord[]; total: number }>;
  stats(f: McpLogFilter): Promise<McpLogStats>;
  filterData(): Promise<McpFilterData>;
  hasLogs(): Promise<boolean>;
  /** Writes what is queued (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function newRecord(r: NewMcpCall): McpCallRecord {
  return { id: randomUUID(), timestamp: new Date().toISOString(), ...r };
}

export class MemoryMcpCallLog implements McpCallStore {
  readonly kind = 'memory';
  readonly #records: McpCallRecord[] = [];

  add(r: NewMcpCall): void {
    this.#records.push(newRecord(r));
    if (this.#records.length > MAX_RECORDS) this.#records.splice(0, this.#records.length - MAX_RECORDS);
  }

  #matching(f: McpLogFilter): McpCallRecord[] {
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

  async search(f: McpLogFilter, page: McpLogPage): Promise<{ records: McpCallRecord[]; total: number }> {
    const found = this.#matching(f);
    const key =
      page.sortBy === 'latency' ? (r: McpCallRecord) => r.latency_ms : page.sortBy === 'cost' ? (r: McpCallRecord) => r.cost : (r: McpCallRecord) => Date.parse(r.timestamp);
    const sorted = [...found].sort((a, b) => (page.order === 'asc' ? key(a) - key(b) : key(b) - key(a)));
    return { records: sorted.slice(page.offset, page.offset + page.limit), total: found.length };
  }

  async stats(f: McpLogFilter): Promise<McpLogStats> {
    const records = this.#matching(f);
    const n = records.length;
    const ok = records.filter((r) => r.status === 'success').length;
    const latency = records.reduce((s, r) => s + r.latency_ms, 0);
    const cost = records.reduce((s, r) => s + r.cost, 0);
    return { total_executions: n, success_rate: n ? (ok / n) * 100 : 0, average_latency: n ? latency / n : 0, total_cost: cost };
  }

  async filterData(): Promise<McpFilterData> {
    const uniq = (xs: (string | undefined)[]) => [...new Set(xs.filter((x): x is string => x !== undefined))].sort();
    return {
      tool_names: uniq(this.#records.map((r) => r.tool)),
      server_labels: uniq(this.#records.map((r) => r.client)),
      virtual_key_ids: uniq(this.#records.map((r) => r.virtual_key_id)),
    };
  }

  async hasLogs(): Promise<boolean> {
    return this.#records.length > 0;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}
}
