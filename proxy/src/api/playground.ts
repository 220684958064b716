// /api/playground: the dashboard's playground. POST runs a chat completions or responses request
// as a chosen virtual key, in process, through the same stages as /v1 (the key taken as given by
// id, its models and providers enforced by plan, its budgets and rate limits admitted and charged,
// the request logged), so the browser never holds a key's value. A streamed answer goes out as the
// /v1 route's own events, then one `playground.summary` event: the log record the logging stage
// builds for it (tokens, cost, latency, time to first token, cache, routing) and the targets
// planned. GET /models lists what a key may call.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { Snapshot } from '../config/snapshot.ts';
import type { ModelSet, VirtualKeyRuntime } from '../config/governance-runtime.ts';
import type { ExecuteRequest, Execution } from '../operations/execute.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { providerModels } from '../pipeline/provider-models.ts';
import { buildRecord, loggingEnabled } from '../logs/stage.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';
import { invalidFields, objectBody } from './errors.ts';
import { queryParam, reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import type { PlaygroundAnswer, PlaygroundModels, PlaygroundSummary } from './answers.ts';
import type { FieldError } from '../schema/validate.ts';

/** Runs one request in process (operations/execute.ts `startExecution`, wired by gateway.ts). */
export type PlaygroundRunner = (snapshot: Snapshot, request: ExecuteRequest) => Execution;

export const PLAYGROUND_OPERATIONS = ['chat', 'responses'] as const;
type PlaygroundOperation = (typeof PLAYGROUND_OPERATIONS)[number];

/** The SSE event that closes a streamed playground answer. */
export const SUMMARY_EVENT = 'playground.summary';

/** How long a provider's list-models may take before the model list goes without it. */
const LIST_TIMEOUT_MS = 5_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The virtual key named by id, or why it cannot be used (a 400 naming `virtual_key_id`). */
function keyById(snapshot: Snapshot, id: unknown, errors: FieldError[]): VirtualKeyRuntime | undefined {
  const rt = snapshot.governance;
  if (id === undefined || id === null || id === '') {
    if (rt.enforceAuth) errors.push({ path: 'virtual_key_id', message: 'is required: this gateway requires a virtual key on inference (client.enforce_auth_on_inference)' });
    return undefined;
  }
  if (typeof id !== 'string') {
    errors.push({ path: 'virtual_key_id', message: 'must be the id of a virtual key (a string)' });
    return undefined;
  }
  const vk = [...rt.virtualKeys.values()].find((k) => k.record.id === id);
  if (!vk) errors.push({ path: 'virtual_key_id', message: `no virtual key has the id '${id.slice(0, 128)}'` });
  else if (vk.record.is_active === false) errors.push({ path: 'virtual_key_id', message: `virtual key '${vk.record.name}' is inactive` });
  return vk;
}

interface PlaygroundRequest {
  vk: VirtualKeyRuntime | undefined;
  operation: PlaygroundOperation;
  body: Record<string, unknown>;
}

/** The playground's own fields, every problem named by its path (the request itself is checked by its operation). */
export function readPlaygroundRequest(raw: unknown, snapshot: Snapshot): PlaygroundRequest {
  const input = objectBody(raw, 'playground request');
  const errors: FieldError[] = [];
  const vk = keyById(snapshot, input.virtual_key_id, errors);
  const operation = input.operation ?? 'chat';
  if (typeof operation !== 'string' || !(PLAYGROUND_OPERATIONS as readonly string[]).includes(operation)) {
    errors.push({ path: 'operation', message: `must be one of ${PLAYGROUND_OPERATIONS.join(', ')}` });
  }
  const body = input.request;
  if (!isObject(body)) errors.push({ path: 'request', message: 'is required: the request body as /v1 takes it (model, and messages or input)' });
  else if (typeof body.model !== 'string' || body.model.trim() === '') errors.push({ path: 'request.model', message: 'is required: a model the key allows, e.g. openai/gpt-4o' });
  for (const k of Object.keys(input)) {
    if (!['virtual_key_id', 'operation', 'request'].includes(k)) errors.push({ path: k, message: 'is not a playground field (virtual_key_id, operation, request)' });
  }
  if (errors.length) throw invalidFields('playground request', errors);
  return { vk, operation: operation as PlaygroundOperation, body: body as Record<string, unknown> };
}

/** What the page shows of an answer: the request's log record (no content) and the targets planned. */
export function summaryOf(ctx: RequestContext, outcome: Outcome, logged: boolean): PlaygroundSummary {
  return {
    record: buildRecord(ctx, outcome, undefined),
    targets: ctx.targets.map((t) => `${t.provider.name}/${t.model}`),
    logged,
  };
}

export interface PlaygroundDeps {
  run: PlaygroundRunner;
  /** Whether a logs store keeps records on this gateway. */
  logsOpen: () => boolean;
}

export function playgroundRouter(service: ConfigService, deps: PlaygroundDeps | undefined): Router {
  const router = Router({ caseSensitive: true });
  router
    .route('/')
    .post(async (req: Request, res: Response) => {
      if (!deps) throw new GatewayError(503, 'the playground is not available on this gateway', { type: 'service_unavailable', code: 'playground_unavailable' });
      const snapshot = service.current();
      const asked = readPlaygroundRequest(req.body, snapshot);
      const controller = new AbortController();
      res.once('close', () => controller.abort());
      const { context, outcome: pending } = deps.run(snapshot, {
        operation: asked.operation,
        body: asked.body,
        signal: controller.signal,
        caller: { principal: asked.vk, admitted: false },
      });
      const outcome = await pending;
      const logged = deps.logsOpen() && loggingEnabled(snapshot);
      res.setHeader('x-request-id', context.requestId);
      await answer(res, context, outcome, logged);
    })
    .all(methodNotAllowed);

  router
    .route('/models')
    .get(async (req: Request, res: Response) => {
      const snapshot = service.current();
      const errors: FieldError[] = [];
      const vk = keyById(snapshot, queryParam(req, 'virtual_key_id'), errors);
      if (errors.length) throw invalidFields('playground models query', errors);
      const controller = new AbortController();
      res.once('close', () => controller.abort());
      reply(res, 200, await modelsFor(snapshot, vk, controller.signal));
    })
    .all(methodNotAllowed);
  return router;
}

async function answer(res: Response, ctx: RequestContext, outcome: Outcome, logged: boolean): Promise<void> {
  switch (outcome.kind) {
    case 'error':
      reply(res, outcome.error.status, outcome.error.toBody(outcome.extra, ctx.requestId));
      return;
    case 'json':
      reply(res, outcome.status, { response: outcome.value, summary: summaryOf(ctx, outcome, logged) } satisfies PlaygroundAnswer);
      return;
    case 'text':
      reply(res, outcome.status, { response: parsed(outcome.text), summary: summaryOf(ctx, outcome, logged) } satisfies PlaygroundAnswer);
      return;
    case 'stream':
      await relayStream(res, ctx, outcome, logged);
      return;
    case 'bytes':
      // Chat and responses never answer raw bytes; drain it so its after hooks run.
      for await (const chunk of outcome.body) void chunk;
      throw new GatewayError(502, 'the answer was not JSON or a stream', { type: 'upstream_invalid_response' });
  }
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The route's own events as /v1 writes them, then the summary once the stream (and its after hooks) ended. */
async function relayStream(res: Response, ctx: RequestContext, outcome: Extract<Outcome, { kind: 'stream' }>, logged: boolean): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  const write = (text: string): Promise<void> | undefined => (res.write(text) ? undefined : new Promise((done) => res.once('drain', done)));
  let failed = false;
  try {
    for await (const batch of outcome.items) {
      if (res.destroyed) break;
      let text = '';
      for (const item of batch) text += outcome.format.encode(item);
      await write(text);
    }
  } catch (err) {
    failed = true;
    const e = err instanceof GatewayError ? err : new GatewayError(500, `internal error: ${(err as Error)?.message ?? String(err)}`, { type: 'internal_error' });
    if (!(err instanceof GatewayError)) log.error('playground stream failed', { error: (err as Error)?.stack ?? String(err) });
    await write(outcome.format.errorEvent(e));
  }
  if (res.destroyed) return;
  if (!failed) await write(outcome.format.done);
  res.end(`event: ${SUMMARY_EVENT}\ndata: ${JSON.stringify(summaryOf(ctx, outcome, logged))}\n\n`);
}

/** `provider/model` of every model the key may call (each grant's allowed models, or its provider's list). */
export async function modelsFor(snapshot: Snapshot, vk: VirtualKeyRuntime | undefined, signal: AbortSignal): Promise<PlaygroundModels> {
  // No key: every provider (a key without provider configs allows none, as plan refuses it).
  const grants: readonly { provider: string; models: ModelSet }[] = vk ? vk.grants : [...snapshot.providers.keys()].map((provider) => ({ provider, models: '*' as const }));
  const lists = await Promise.all(
    grants.map(async (g) => {
      const p = snapshot.providers.get(g.provider);
      if (!p) return [];
      if (g.models !== '*') return [...g.models].map((m) => `${p.name}/${m}`);
      return listed(p, signal);
    }),
  );
  return { models: [...new Set(lists.flat())].sort(), any: grants.some((g) => g.models === '*') };
}

async function listed(p: ProviderRuntime, signal: AbortSignal): Promise<string[]> {
  const fromKeys = p.keys.flatMap((k) => (k.models ? [...k.models] : [])).map((m) => `${p.name}/${m}`);
  if (!p.operations.has('models')) return fromKeys;
  try {
    const entries = await providerModels(p, AbortSignal.any([signal, AbortSignal.timeout(LIST_TIMEOUT_MS)]));
    return [...fromKeys, ...entries.map((e) => e.id)];
  } catch (err) {
    // One provider down must not hide the others; its models can still be typed.
    log.warn('playground: list-models failed for a provider', { provider: p.name, error: (err as Error).message });
    return fromKeys;
  }
}
