// The delivery body (spec: "Webhook delivery payload"). What is stored at enqueue is the `data`
// object as it was decided at the job's finish (inline response or error, or the *_omitted flags);
// `result_expired` is decided at each attempt, and an expired result is no longer inlined.
import type { JobOutcome, StoredData } from './queue.ts';


/** The data to store: inline response/error only under include_response and within the size cap. */
export function storedData(job: JobOutcome, includeResponse: boolean, maxKbs: number): StoredData {
  const data: StoredData = {
    job_id: job.id,
    request_type: job.request_type,
    status: job.status,
    status_code: job.status_code,
    result_url: job.result_url,
    result_expires_at: job.result_expires_at,
    ...(job.request_id !== undefined && { request_id: job.request_id }),
  };
  if (job.trace) data.trace = job.trace;
  if (!includeResponse) return data;
  const fits = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '') <= maxKbs * 1024;
  if (job.status === 'completed' && job.response !== undefined) {
    if (fits(job.response)) data.response = job.response;
    else data.response_omitted = true;
  }
  if (job.status === 'failed' && job.error !== undefined) {
    if (fits(job.error)) data.error = job.error;
    else data.error_omitted = true;
  }
  return data;
}

/** The JSON body of one attempt. */
export function deliveryBody(event: string, createdAt: number, data: StoredData, resultExpiresAt: number | undefined, now = Date.now()): string {
  // The trace context goes in headers (traceHeaders), not in the body.
  const { trace: _t, ...fields } = data;
  let out: Record<string, unknown> = fields;
  if (resultExpiresAt !== undefined && now >= resultExpiresAt) {
    const { response: _r, error: _e, ...rest } = out;
    out = { ...rest, result_expired: true };
  }
  return JSON.stringify({ event, created_at: new Date(createdAt).toISOString(), data: out });
}

/** The W3C trace context headers of a delivery: the trace its job was submitted in continues at the receiver. */
export function traceHeaders(data: StoredData): Record<string, string> {
  const t = data.trace;
  if (!t || typeof t.traceparent !== 'string') return {};
  return { traceparent: t.traceparent, ...(typeof t.tracestate === 'string' && { tracestate: t.tracestate }) };
}
