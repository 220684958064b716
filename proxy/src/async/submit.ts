// Submitting an async job: the request is read and checked like its sync twin (the operation's
// accept step), bounded per key and in all, then, once the caller stages, plan and limits let it
// through, stored as a job row instead of being run, and a worker started on it once the 202 is
// on its way. The HTTP handler (endpoints/async.ts) only reads the request and writes the answer.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { Accept } from '../pipeline/runner.ts';
import { acceptOf } from '../operations/execute.ts';
import type { OPERATIONS } from '../unified/operations.ts';
import { invalidRequest } from '../unified/errors.ts';
import type { FormPart } from '../unified/form.ts';
import { requestTraceHeaders } from '../tracing/stage.ts';
import { checkWebhookForSubmit, WEBHOOK_HEADER } from '../webhooks/enqueue.ts';
import { overBound } from './bounds.ts';
import { iso } from './job-view.ts';
import type { AsyncJobs } from './jobs.ts';
import { encodeForm, keptHeaders } from './run-job.ts';
import { asyncSettings } from './settings.ts';

/** A table operation that may run async. */
export type AsyncOperation = Extract<(typeof OPERATIONS)[number], { async: true }>;

export interface JobSubmission {
  op: AsyncOperation;
  /** The JSON body, or the form's parts. */
  input: unknown;
  headers: IncomingHttpHeaders;
  /** The webhook endpoint named to hear of the result. */
  webhook: string | undefined;
  ttlSeconds: number;
}

/** Streaming has no one to stream to: refused with the field that asked for it. */
export function refuseStreaming(op: AsyncOperation, input: unknown): void {
  const refuse = (param: string) => invalidRequest(`'${param}' asks for a stream, which async jobs do not support: submit without it and poll the job (or name a webhook in ${WEBHOOK_HEADER})`, param);
  if (Array.isArray(input)) {
    let stream: string | undefined;
    for (const p of input as FormPart[]) if (p.name === 'stream' && !('data' in p)) stream = p.value;
    if (stream?.trim().toLowerCase() === 'true') throw refuse('stream');
    return;
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) return;
  const body = input as Record<string, unknown>;
  if (body.stream === true) throw refuse('stream');
  if (op.name === 'speech' && body.stream_format === 'sse') throw refuse('stream_format');
}

/**
 * Runs a submit through the submit pipeline (identify, plan, limits): the answer is the 202 with
 * the job's id, or the error the sync twin would have given.
 */
export function submitJob(jobs: AsyncJobs, ctx: RequestContext, s: JobSubmission): Promise<Outcome> {
  // The body is already read: the caller stages run first, then accept (validation, the webhook), then plan and limits.
  return jobs.submitPipeline.run(ctx, submitAccept(jobs, s));
}

function submitAccept(jobs: AsyncJobs, s: JobSubmission): Accept {
  const { op, input, webhook } = s;
  const validate = acceptOf(op.name);
  return async (c) => {
    await validate(c);
    // After the caller stages (an anonymous caller cannot probe endpoint names: run() identifies
    // before accept) and before the limits, so a refused submit uses up no request of a rate limit.
    if (webhook !== undefined) {
      const refused = checkWebhookForSubmit(c.snapshot, webhook);
      if (refused) throw refused;
    }
    // Bounded per key and in all before the limits count the request (a refused submit uses none).
    const requestBody = JSON.stringify(Array.isArray(input) ? encodeForm(input as FormPart[]) : input);
    // Traced, the job's run and its webhook continue under the submit's span (the client's span is its parent).
    const requestHeaders = JSON.stringify({ ...keptHeaders(s.headers), ...requestTraceHeaders(c) });
    const key = c.vk ? { id: c.vk.record.id, name: c.vk.record.name } : undefined;
    const full = await overBound(jobs.store, asyncSettings(c.snapshot.config), key, Buffer.byteLength(requestBody) + Buffer.byteLength(requestHeaders));
    if (full) throw full;
    // Instead of the call: the job, stored once plan and limits let it through.
    return async (c2) => {
      const now = Date.now();
      const id = randomUUID();
      const job = {
        id,
        operation: op.name,
        path: op.path,
        request_type: op.requestType,
        virtual_key_id: c2.vk?.record.id,
        request_body: requestBody,
        request_headers: requestHeaders,
        webhook,
        created_at: now,
        ttl_seconds: s.ttlSeconds,
        request_id: c2.requestId,
      };
      const lease = jobs.worker.reserve();
      const stored = jobs.store.insert(job, lease);
      if (lease) {
        const claimed = await stored.catch((err: unknown) => {
          jobs.worker.startReserved(undefined, lease.id);
          throw err;
        });
        // Started once the 202 is on its way (setImmediate runs after the answer is written).
        setImmediate(() => jobs.worker.startReserved(claimed, lease.id));
      } else {
        await stored;
      }
      return { kind: 'json', status: 202, value: { id, status: 'pending', created_at: iso(now), expires_at: iso(now + s.ttlSeconds * 1000), request_id: c2.requestId } };
    };
  };
}
