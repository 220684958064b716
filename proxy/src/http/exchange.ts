import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Snapshot } from '../config/snapshot.ts';
import type { Services } from '../services.ts';
import type { RequestAbort } from '../pipeline/client-gone.ts';

/** One client request in flight: the snapshot it started on and a signal that fires if the client leaves. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** Path without the query string. */
  path: string;
  /** Captures of a pattern route (e.g. the model of `/genai/v1beta/models/{model}:generateContent`). */
  params: string[];
  /** Query parameters, parsed on first use (most endpoints never read them). */
  query(): URLSearchParams;
  snapshot: Snapshot;
  /**
   * Fired when the client leaves mid-answer; its AbortSignal (`abort.signal`) is made on first read.
   * Not a `signal` getter here: a getter in the object literal gives each exchange its own map.
   */
  abort: RequestAbort;
  /** performance.now() at arrival. */
  started: number;
  /** The gateway's services (counters, catalog, metrics, pipeline). */
  services: Services;
  /** Set on the JSON body before validation, overriding it: a route that names the model in its path (Azure deployments). */
  bodyFields?: Readonly<Record<string, unknown>>;
  /** The request's id (request-id.ts): the client's `x-request-id` when acceptable, else a new one; answered in that header. */
  requestId: string;
  /** What the access log line names besides method, path and status: filled in by whoever learns it. */
  access: { provider?: string; model?: string; vk?: string };
}
