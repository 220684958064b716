// Runs one stored job through execute() as its submitter, and turns the Outcome into what the job
// row keeps: a JSON result (or error body) and the HTTP status the sync call would have answered.
import type { IncomingHttpHeaders } from 'node:http';
import type { Snapshot } from '../config/snapshot.ts';
import type { ExecuteOperation, ExecuteRequest } from '../operations/execute.ts';
import { OPERATION_BY_NAME } from '../unified/operations.ts';
import type { KnownCaller } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { GatewayError } from '../unified/errors.ts';
import type { FormPart } from '../unified/form.ts';
import type { Job } from './job-store.ts';
import { asyncSettings } from './settings.ts';

export interface JobOutcome {
  status: 'completed' | 'failed';
  status_code: number;
  /** JSON text. */
  result?: string;
  /** JSON text of the gateway error body. */
  error?: string;
}

export type Executor = (snapshot: Snapshot, request: ExecuteRequest) => Promise<Outcome>;

/**
 * Headers a job keeps for its run: credentials are never stored (the submitter's virtual key is
 * kept by id and handed to the run as its caller), nor framing or async-only ones.
 */
const NOT_KEPT = new Set([
  'authorization', 'proxy-authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'x-bf-vk', 'cookie',
  'host', 'content-length', 'content-type', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'te',
  'x-bf-async-webhook', 'x-bf-async-job-result-ttl',
]);

export function keptHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_KEPT.has(name) || name.startsWith(':')) continue;
    out[name] = value;
  }
  return out;
}

/** A form's parts as JSON (file bytes base64) and back. */
export function encodeForm(parts: readonly FormPart[]): unknown[] {
  return parts.map((p) => ('data' in p ? { name: p.name, filename: p.filename, contentType: p.contentType, data: p.data.toString('base64') } : p));
}

function decodeForm(parts: unknown): FormPart[] {
  return (parts as { name: string; value?: string; filename?: string; contentType?: string; data?: string }[]).map((p) =>
    p.data !== undefined ? { name: p.name, filename: p.filename ?? 'file', contentType: p.contentType ?? 'application/octet-stream', data: Buffer.from(p.data, 'base64') } : { name: p.name, value: p.value ?? '' },
  );
}

const unauthorized = (message: string) => new GatewayError(401, message, { type: 'authentication_error', code: 'invalid_virtual_key' });

/**
 * The job's caller: its submitter, identified and admitted at submit. The virtual key is looked up
 * by id in the configuration the job runs on, so a rotated secret still runs the job as the same
 * key; a key deleted or deactivated since, or a gateway that now requires a key of an anonymous
 * job, fails it with 401 as a sync request would.
 */
function submitter(job: Job, snapshot: Snapshot): KnownCaller | GatewayError {
  const rt = snapshot.governance;
  if (!job.virtual_key_id) {
    return rt.enforceAuth ? unauthorized('a virtual key is required: send it in x-bf-vk (or as a Bearer token)') : { principal: undefined, admitted: true };
  }
  for (const vk of rt.virtualKeys.values()) {
    if (vk.record.id !== job.virtual_key_id) continue;
    if (vk.record.is_active === false) return unauthorized(`virtual key '${vk.record.name}' is inactive`);
    return { principal: vk, admitted: true };
  }
  return unauthorized(`the virtual key that submitted async job '${job.id}' no longer exists`);
}

export async function runJob(job: Job, snapshot: Snapshot, execute: Executor, signal: AbortSignal): Promise<JobOutcome> {
  return withRequestId(await run(job, snapshot, execute, signal), job.request_id);
}

/** A failed job's error object names the submit's request id, as the error answer of a sync request does. */
function withRequestId(out: JobOutcome, requestId: string | undefined): JobOutcome {
  if (out.status !== 'failed' || requestId === undefined || out.error === undefined) return out;
  const body = JSON.parse(out.error) as { error?: unknown };
  if (!body || typeof body.error !== 'object' || body.error === null || 'request_id' in body.error) return out;
  (body.error as Record<string, unknown>).request_id = requestId;
  return { ...out, error: JSON.stringify(body) };
}

async function run(job: Job, snapshot: Snapshot, execute: Executor, signal: AbortSignal): Promise<JobOutcome> {
  const caller = submitter(job, snapshot);
  if (caller instanceof GatewayError) return failed(caller, job.request_type);
  const stored = JSON.parse(job.request_body ?? 'null') as unknown;
  // A form's parts were stored as a list (an operation reading either kind keeps what came).
  const body = OPERATION_BY_NAME.get(job.operation)?.body !== 'json' && Array.isArray(stored) ? decodeForm(stored) : stored;
  const headers = JSON.parse(job.request_headers ?? '{}') as IncomingHttpHeaders;
  let outcome: Outcome;
  try {
    outcome = await execute(snapshot, { operation: job.operation as ExecuteOperation, body, headers, signal, caller, untilDone: true, ...(job.request_id !== undefined && { requestId: job.request_id }) });
  } catch (err) {
    return failed(err instanceof GatewayError ? err : new GatewayError(500, `internal error: ${(err as Error)?.message ?? String(err)}`, { type: 'internal_error' }), job.request_type);
  }
  const maxBytes = asyncSettings(snapshot.config).maxResultBytes;
  const out = await settled(outcome, job.request_type, maxBytes);
  return (out.result?.length ?? 0) > maxBytes ? tooLarge(maxBytes, job.request_type) : out;
}

/** A result over client.async_job_config.max_result_size_mb: the job fails instead of filling the store. */
function tooLarge(maxBytes: number, requestType: string): JobOutcome {
  const mb = maxBytes / 1024 / 1024;
  return failed(new GatewayError(507, `the answer is larger than the ${mb} MB an async job keeps (client.async_job_config.max_result_size_mb)`, { type: 'server_error', code: 'result_too_large' }), requestType);
}

function failed(e: GatewayError, requestType: string, extra?: { model_requested?: string; request_type?: string }): JobOutcome {
  return { status: 'failed', status_code: e.status, error: JSON.stringify(e.toBody(extra ?? { request_type: requestType })) };
}

function done(status: number, value: unknown): JobOutcome {
  return status < 400 ? { status: 'completed', status_code: status, result: JSON.stringify(value) } : { status: 'failed', status_code: status, error: JSON.stringify(value) };
}

const isJson = (contentType: string) => /\bjson\b/i.test(contentType);
const isText = (contentType: string) => /^text\//i.test(contentType) || isJson(contentType);

async function settled(outcome: Outcome, requestType: string, maxBytes: number): Promise<JobOutcome> {
  switch (outcome.kind) {
    case 'json':
      return done(outcome.status, outcome.value);
    case 'text': {
      const type = headerOf(outcome.headers, 'content-type') ?? 'application/json';
      return done(outcome.status, isJson(type) ? JSON.parse(outcome.text) : { content_type: type, text: outcome.text });
    }
    case 'bytes': {
      const chunks: Uint8Array[] = [];
      let size = 0;
      try {
        for await (const c of outcome.body) {
          chunks.push(c);
          // Stops reading (the upstream body is closed) once it cannot be kept anyway.
          if ((size += c.length) > maxBytes) return tooLarge(maxBytes, requestType);
        }
      } catch (err) {
        return failed(err instanceof GatewayError ? err : new GatewayError(502, `the provider's answer broke off: ${(err as Error).message}`, { type: 'upstream_error' }), requestType);
      }
      const bytes = Buffer.concat(chunks);
      const type = headerOf(outcome.headers, 'content-type') ?? 'application/octet-stream';
      // Audio and other binary answers are kept base64 inside the JSON result.
      const value = isJson(type) ? JSON.parse(bytes.toString('utf8')) : isText(type) ? { content_type: type, text: bytes.toString('utf8') } : { content_type: type, data: bytes.toString('base64') };
      return done(outcome.status, value);
    }
    case 'stream': {
      // Submit refuses streaming requests; should one get here, it is drained (so its after hooks run) and failed.
      for await (const _ of outcome.items) void _;
      return failed(new GatewayError(400, 'streaming is not supported for async jobs', { type: 'invalid_request_error', param: 'stream' }), requestType);
    }
    case 'error':
      return failed(outcome.error, requestType, outcome.extra);
  }
}

function headerOf(headers: Record<string, string | string[]> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  return undefined;
}
