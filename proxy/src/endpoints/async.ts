// /v1/async/<operation>: submit (POST: read and validate like the sync twin, identify the caller and
// admit the request against its limits, store the job, answer 202 at once) and poll
// (GET /v1/async/<operation>/<job_id>: 202 while pending or processing, 200 with `result` or `error`
// once finished, 410 once the result expired). Only the submitting virtual key, or a management
// credential, can read a job. Jobs need a logs store; without one every call is a 503 naming it.
import type { Exchange } from '../http/exchange.ts';
import { readBody, parseJson } from '../http/body.ts';
import { isMultipart, readForm } from '../http/multipart.ts';
import { respond, sendError, sendJson } from '../http/respond.ts';
import type { Methods, PatternRoutes, Routes } from '../http/server.ts';
import { authenticate, managementAuth, SessionStore } from '../api/auth.ts';
import { identifyCaller } from '../governance/auth.ts';
import { RequestContext } from '../pipeline/context.ts';
import { GatewayError, invalidRequest } from '../unified/errors.ts';
import type { AsyncJobs } from '../async/jobs.ts';
import type { Job } from '../async/job-store.ts';
import { iso, jobView } from '../async/job-view.ts';
import { refuseStreaming, submitJob, type AsyncOperation } from '../async/submit.ts';
import { asyncSettings, MAX_RESULT_TTL_SECONDS } from '../async/settings.ts';
import { OPENAI_PREFIXES, OPERATIONS } from '../unified/operations.ts';
import { BF_HEADERS } from '../bf-headers.ts';

export const WEBHOOK_HEADER = BF_HEADERS.asyncWebhook.name;
export const TTL_HEADER = BF_HEADERS.asyncResultTtl.name;

/** Session tokens are the dashboard's (per /api instance); here only Basic and management API keys count. */
const NO_SESSIONS = new SessionStore();

const noStore = () =>
  new GatewayError(503, 'async jobs need a logs store: configure logs_store (sqlite or postgres) or client.enable_logging, then restart', {
    type: 'service_unavailable',
    code: 'async_store_unavailable',
  });

const notFound = (id: string) => new GatewayError(404, `async job '${id}' not found`, { type: 'not_found_error', code: 'job_not_found' });

function header(ex: Exchange, name: string): string | undefined {
  const v = ex.req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** x-bf-async-job-result-ttl: whole seconds, 1 to 30 days; absent: client.async_job_result_ttl. */
function ttlOf(ex: Exchange): number {
  const raw = header(ex, TTL_HEADER);
  if (raw === undefined) return asyncSettings(ex.snapshot.config).resultTtlSeconds;
  const n = /^\s*\d{1,10}\s*$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_RESULT_TTL_SECONDS)) throw invalidRequest(`${TTL_HEADER} must be a whole number of seconds from 1 to ${MAX_RESULT_TTL_SECONDS}`, TTL_HEADER);
  return n;
}

/** The path's video id as the body's `video.id` (`videos/{id}/remix`); a body naming another video is refused. */
function withPathId(input: unknown, id: string): unknown {
  const body = input as Record<string, unknown>;
  const named = body.video;
  if (named !== undefined && !(named !== null && typeof named === 'object' && (named as { id?: unknown }).id === id)) {
    throw invalidRequest(`'video' names another video than the path's '${id}'`, 'video');
  }
  return { ...body, video: { id } };
}

function submit(op: AsyncOperation, jobs: AsyncJobs | undefined, idInPath = false): (ex: Exchange) => Promise<void> {
  return async (ex) => {
    let input: unknown;
    let ttl: number;
    let webhook: string | undefined;
    try {
      if (!jobs) throw noStore();
      // The whole request is read first (as the sync routes do), so a refusal never cuts off an upload.
      const form = op.body === 'form' || (op.body === 'json_or_form' && isMultipart(ex.req));
      input = form ? await readForm(ex.req, ex.snapshot.maxBodyBytes) : parseJson(await readBody(ex.req, ex.snapshot.maxBodyBytes));
      // A JSON body is an object, as the sync twin's validation says; an array here would be taken
      // for a form's parts further on (the job's run tells a form from JSON that way).
      if (!form && (input === null || typeof input !== 'object' || Array.isArray(input))) throw invalidRequest('request body must be a JSON object');
      if (idInPath) input = withPathId(input, ex.params[0] ?? '');
      refuseStreaming(op, input);
      ttl = ttlOf(ex);
      webhook = header(ex, WEBHOOK_HEADER);
    } catch (err) {
      sendError(ex.res, err, { request_type: op.requestType });
      return;
    }
    const ctx = new RequestContext({
      services: ex.services,
      snapshot: ex.snapshot,
      operation: op.name,
      headers: ex.req.headers,
      signal: ex.abort,
      started: ex.started,
      input,
      access: ex.access,
      requestId: ex.requestId,
    });
    await respond(ex.res, await submitJob(jobs, ctx, { op, input, headers: ex.req.headers, webhook, ttlSeconds: ttl }));
  };
}

/**
 * Who may read a job: anyone holding the id of a job submitted without a virtual key; else the
 * same virtual key, or a management credential. Another key's job is a 404 (its existence is not
 * confirmed).
 */
function mayRead(ex: Exchange, job: Job): boolean {
  if (!job.virtual_key_id) return true;
  const auth = managementAuth(ex.snapshot.governance.auth);
  if (auth.enabled && authenticate(ex.req.headers, auth, NO_SESSIONS) !== undefined) return true;
  const vk = identifyCaller(ex.snapshot.governance, ex.req.headers);
  return vk?.record.id === job.virtual_key_id;
}

function poll(op: AsyncOperation, jobs: AsyncJobs | undefined): (ex: Exchange) => Promise<void> {
  return async (ex) => {
    try {
      if (!jobs) throw noStore();
      const id = ex.params[0] ?? '';
      const job = await jobs.store.get(id);
      if (!job || job.path !== op.path || !mayRead(ex, job)) throw notFound(id);
      const finished = job.status === 'completed' || job.status === 'failed';
      if (job.expired || (finished && job.expires_at <= Date.now())) {
        throw new GatewayError(410, `async job '${id}' expired at ${iso(job.expires_at)}: its result was removed`, { type: 'not_found_error', code: 'job_expired' });
      }
      sendJson(ex.res, finished ? 200 : 202, jobView(job));
    } catch (err) {
      sendError(ex.res, err, { request_type: op.requestType });
    }
  };
}

const ASYNC_OPERATIONS = OPERATIONS.filter((op): op is AsyncOperation => op.async);

/**
 * The async routes: exact submit paths and a pattern per poll path, under every prefix the sync
 * twins are served at (/v1, /openai/v1, /openai and the framework prefixes' /v1), so a client
 * whose base URL is one of those reaches `{base}/async/...` as well. A job is one job whichever
 * prefix submitted it: any of them polls it (result_url names the /v1 one).
 */
export function asyncRoutes(jobs: AsyncJobs | undefined): { routes: Routes; patterns: PatternRoutes } {
  const routes: Routes = {};
  const patterns: PatternRoutes = [];
  for (const op of ASYNC_OPERATIONS) {
    const submitMethods = { POST: submit(op, jobs) } satisfies Methods;
    const pollMethods = { GET: poll(op, jobs) } satisfies Methods;
    const idPath = 'asyncIdPath' in op ? op.asyncIdPath.replace('{id}', '([A-Za-z0-9_-]{1,128})') : undefined;
    const idSubmit = idPath ? ({ POST: submit(op, jobs, true) } satisfies Methods) : undefined;
    for (const prefix of OPENAI_PREFIXES) {
      routes[`${prefix}/async/${op.path}`] = submitMethods;
      patterns.push([new RegExp(`^${prefix}/async/${op.path}/([A-Za-z0-9_-]{1,128})$`), pollMethods]);
      if (idSubmit) patterns.push([new RegExp(`^${prefix}/async/${idPath}$`), idSubmit]);
    }
  }
  return { routes, patterns };
}
