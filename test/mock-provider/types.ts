// Public and internal types of the mock upstream provider.
import type { RealtimeRecord } from './realtime.ts';
import type { WebrtcCallRecord } from './realtime-webrtc.ts';
import type { MockLoad } from './vllm-metrics.ts';

export type Format = 'openai' | 'anthropic' | 'gemini' | 'cohere' | 'bedrock' | 'azure' | 'vertex' | 'mistral' | 'ollama' | 'openrouter';

export interface RecordedRequest {
  format: Format;
  method: string;
  /** URL path without the query string, e.g. `/openai/v1/chat/completions`. */
  path: string;
  /** Decoded query parameters (last value wins). */
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (a multipart body: its form), or undefined when there was none or it was not valid. */
  body: unknown;
  /** HTTP status answered (unset while pending, or when the connection was dropped without an answer). */
  status?: number;
  /** Exactly the body bytes the mock wrote (for streams: the SSE events sent so far). */
  responseBody?: string;
  /** True when the client closed the connection before the answer was complete. */
  aborted?: boolean;
}

export interface Fault {
  /** Match only requests of this format (default: any). */
  format?: Format;
  /** Match only requests for this model (default: any). */
  model?: string;
  /** Answer with this HTTP status and the provider's own error body shape. */
  status?: number;
  /** Error message (default: a sensible one per status). */
  message?: string;
  /** Seconds; sets the Retry-After header (use with 429/503). */
  retryAfter?: number;
  /** Extra delay before answering. */
  latencyMs?: number;
  /** Streaming: destroy the socket after N SSE events. Non-streaming: drop the connection. */
  resetAfterChunks?: number;
  /** Destroy the socket without answering. */
  dropConnection?: boolean;
  /** How many matching requests it affects (default 1). */
  times?: number;
  /**
   * Answer exactly this instead of the format's handler (after auth is skipped): a status (default
   * 200), headers (default content-type application/json) and a body string, or SSE `events`
   * written one by one (each a complete `data: ...\n\n` frame, or any raw text).
   */
  reply?: { status?: number; headers?: Record<string, string>; body?: string; events?: string[] };
  /**
   * Answer 200 with a body of `bytes` bytes generated as it is written (never held whole): a JSON
   * object with one huge string member, or with `stream: true` an SSE event whose `data:` line never
   * ends. For testing the gateway's size limits.
   */
  oversize?: { bytes: number; stream?: boolean };
}

export interface MockProvider {
  url: string;
  port: number;
  /** Every provider request received, in order (control-API calls are not recorded). */
  requests: RecordedRequest[];
  /** Realtime WebSocket sessions opened (realtime.ts): the handshake's headers and the client events received. */
  realtime: RealtimeRecord[];
  /** WebRTC calls answered (realtime-webrtc.ts): the request, the SDPs, the events and the RTP counts. */
  webrtc: WebrtcCallRecord[];
  inject(fault: Fault): void;
  /** The load GET /metrics reports in vLLM's names; null: no metrics (404). */
  setLoad(load: MockLoad | null): void;
  /** Clear queued faults and recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

export interface MockProviderOptions {
  port?: number;
  host?: string;
  /** Delay before the first byte of every answer. */
  latencyMs?: number;
  /** Delay between SSE events (default 1 ms; 0 writes a whole stream at once). */
  chunkDelayMs?: number;
  /** Keep at most this many recorded requests, realtime sessions and events per session (oldest dropped). Default: unlimited. */
  maxRecordedRequests?: number;
}

export type Headers = Record<string, string>;

/** What a format handler answers; the server does the transport (latency, chunk delays, faults). */
export type Reply =
  | { kind: 'json'; status: number; body: string; headers?: Headers }
  | { kind: 'sse'; events: string[]; headers?: Headers; /** `latin1` for binary framing (Bedrock event-stream). */ encoding?: BufferEncoding }
  /** A binary body of `length` bytes made piece by piece as the client reads it (video content): never held whole. */
  | { kind: 'bytes'; status: number; length: number; headers: Headers; piece: (offset: number, size: number) => Buffer };

export interface RequestContext {
  method: string;
  /** Path below the format prefix, e.g. `/v1/chat/completions`. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** The body bytes as received (for bodies that are not JSON, such as an OAuth token form). */
  raw: Buffer;
  /** True when a body was sent but it was not valid JSON. */
  badJson: boolean;
  /** Per-server id generator. */
  nextId: () => string;
}

export interface Route {
  /** Model the request is for (used by fault matching). */
  model: string | undefined;
  handle: (ctx: RequestContext) => Reply;
}

export interface FormatModule {
  format: Format;
  /** Find the endpoint for a method + path (below the prefix); undefined → 404. */
  route: (method: string, path: string, body: unknown) => Route | undefined;
  /** Authentication / mandatory headers check; a Reply means reject. */
  authenticate: (ctx: RequestContext) => Reply | undefined;
  /** Error reply in this provider's own shape. */
  error: (status: number, message?: string, extra?: ErrorExtra) => Reply;
  /** 404 for an unknown endpoint. */
  notFound: (method: string, path: string) => Reply;
}

export interface ErrorExtra {
  param?: string | null;
  code?: string | null;
  type?: string;
  headers?: Headers;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: unknown };
