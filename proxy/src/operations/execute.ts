// Running a request with no HTTP response at all (async jobs, agent loops, cache warm-up, tests):
// the same routes, stages and execution as over HTTP, the outcome handed back as a value. Answers
// come as values (JSON objects, unified chunks), not the text fast paths HTTP clients get.
import type { Snapshot } from '../config/snapshot.ts';
import { RequestContext, type ContextServices, type InProcessOrigin } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { Accept, Pipeline } from '../pipeline/runner.ts';
import { inferenceAccept } from './inference.ts';
import { OPERATION_ROUTES } from './specs.ts';
import { OPERATION_BY_NAME, type OperationName } from '../unified/operations.ts';

/** Each operation's read-and-validate step, built once: a JSON body, or (the form ones) a multipart form's parts. */
const ACCEPTS: ReadonlyMap<OperationName, Accept> = new Map([...OPERATION_ROUTES].map(([name, route]) => [name, inferenceAccept(route)]));

export type ExecuteOperation = OperationName;

export interface ExecuteRequest extends InProcessOrigin {
  operation: ExecuteOperation;
  /**
   * The request as its OpenAI-format JSON body (`stream: true` for a stream of unified chunks); for
   * transcription, image_edit and image_variation the form's parts (unified/form.ts FormPart[]).
   */
  body: unknown;
}

/**
 * Runs one request through the snapshot's stages. A stream outcome must be iterated to its end
 * (or `return()`ed): its `after` hooks (usage charged, metrics) run when it is.
 */
export function execute(services: ContextServices & { pipeline: Pipeline }, snapshot: Snapshot, request: ExecuteRequest): Promise<Outcome> {
  return startExecution(services, snapshot, request).outcome;
}

/** A request run in process, with the context the stages fill in: read it once the outcome is settled (a stream read to its end). */
export interface Execution {
  context: RequestContext;
  outcome: Promise<Outcome>;
}

/** execute(), keeping the request's context: what a caller reports of the answer besides its body (the dashboard's playground: cost, routing, timings). */
export function startExecution(services: ContextServices & { pipeline: Pipeline }, snapshot: Snapshot, request: ExecuteRequest): Execution {
  const context = new RequestContext({
    services,
    snapshot,
    operation: request.operation,
    op: OPERATION_BY_NAME.get(request.operation),
    input: request.body,
    ...(request.headers && { headers: request.headers }),
    ...(request.signal && { signal: request.signal }),
    ...(request.parentRequestId && { parentRequestId: request.parentRequestId }),
    ...(request.requestId && { requestId: request.requestId }),
    ...(request.turnOf && { turnOf: request.turnOf }),
    ...(request.caller && { caller: request.caller }),
    ...(request.untilDone && { untilDone: true }),
  });
  return { context, outcome: services.pipeline.run(context, acceptOf(request.operation), true) };
}

/** An operation's read-and-validate step: async submit checks a request with it, then stores it instead of running it. */
export function acceptOf(operation: ExecuteOperation): Accept {
  // A name from outside the type (a stored job's) fails inside the pipeline, as an error outcome.
  return ACCEPTS.get(operation) ?? (() => Promise.reject(new TypeError(`unknown operation '${operation}'`)));
}
