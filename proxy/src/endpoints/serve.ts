// How an HTTP route runs a request: a context from the exchange, the pipeline (stages around the
// execution), and respond() for the answer.
import type { Exchange } from '../http/exchange.ts';
import { respond, type ErrorRenderer } from '../http/respond.ts';
import { RequestContext } from '../pipeline/context.ts';
import type { ErrorExtra } from '../pipeline/outcome.ts';
import type { Accept } from '../pipeline/runner.ts';
import { inferenceAccept, type InferenceRoute, type ModelRequest } from '../operations/inference.ts';
import type { OperationRow } from '../unified/operations.ts';

/** What a route says about itself before anything is read (built once per route). */
export interface RouteInfo {
  /** Metrics `operation` label. */
  operation: string;
  /** The operations-table row the route serves (RequestContext.op). */
  op?: OperationRow;
  /** The request type error answers name, from the first stage on. */
  requestType?: string;
  /** Native prefixes answer errors in their provider's own shape. */
  renderError?: ErrorRenderer;
  /** Read the whole request before the caller stages (see Pipeline.run). */
  readFirst?: boolean;
}

export function contextOf(ex: Exchange, operation: string, op?: OperationRow): RequestContext {
  return new RequestContext({
    services: ex.services,
    snapshot: ex.snapshot,
    operation,
    op,
    headers: ex.req.headers,
    query: ex.query,
    signal: ex.abort,
    started: ex.started,
    http: ex,
    access: ex.access,
    requestId: ex.requestId,
    params: ex.params,
  });
}

/** The HTTP handler running `accept` (and what it returns) through the pipeline. */
export function httpRoute(info: RouteInfo, accept: Accept): (ex: Exchange) => Promise<void> {
  const readFirst = info.readFirst === true;
  const extra: ErrorExtra | undefined = info.requestType === undefined ? undefined : { request_type: info.requestType };
  const renderError = info.renderError;
  // Not async: the server catches a handler's synchronous throw as it catches a rejection, and a
  // chain keeps no suspended frame of this function while the request runs.
  return (ex) => {
    const ctx = contextOf(ex, info.operation, info.op);
    if (extra) {
      ctx.requestType = info.requestType!;
      ctx.errorExtra = extra;
    }
    // The write's promise returned, not awaited: a held stream keeps nothing of this function for its life.
    return ex.services.pipeline.run(ctx, accept, readFirst).then((outcome) => respond(ex.res, outcome, renderError));
  };
}

/** The HTTP handler of an inference route (a table operation's, or a native front door's). */
export function httpInference<R extends ModelRequest>(route: InferenceRoute<R>): (ex: Exchange) => Promise<void> {
  return httpRoute({ operation: route.operation, op: route.op, requestType: route.requestType, renderError: route.errorBody, readFirst: true }, inferenceAccept(route));
}
