// Azure OpenAI wire format: OpenAI's bodies on Azure's paths, auth and errors. The OpenAI handlers
// answer; this module adds what Azure does differently:
// - paths: `/openai/deployments/{deployment}/chat/completions|completions|embeddings` and the dated
//   `/openai/responses`, `/openai/models` need `?api-version=` (without it Azure answers 404
//   "Resource not found"); the v1 API `/openai/v1/...` takes the deployment in the body's `model`
//   and needs no api-version.
// - auth: `api-key: <key>` or `Authorization: Bearer <Entra ID token>`; otherwise a 401 in Azure's
//   `{error:{code,message}}` shape.
// - a deployment whose name starts with `nonexistent` is Azure's 404 DeploymentNotFound.
// - chat and text completions carry content-filter annotations: `prompt_filter_results` and per-choice
//   `content_filter_results`; a stream starts with a chunk holding only `prompt_filter_results`.
// - a container delete (`DELETE /openai/v1/containers/{id}`) succeeds with no body, as Azure's
//   reference documents it (OpenAI answers a deletion object).
// - Sora 2 on the v1 API (`/openai/v1/videos...`, OpenAI's Videos API): the create's `model` (form
//   or JSON) names a deployment; the job runs that deployment's model (a deployment named as a Sora
//   model runs it, any other `sora-2`), and a `nonexistent...` deployment is DeploymentNotFound.
//   Azure documents create, retrieve, list, content, delete and remix; edits, extensions and
//   characters are not Azure routes (404).
// - Mistral Document AI on Azure AI Foundry: `POST /providers/mistral/azure/ocr` at the resource's
//   root, Mistral's OCR body (the deployment in `model`) and answer, no api-version, the key as
//   `Authorization: Bearer`. Documents are read inline only: a document that is not a base64 data
//   URL is a 400.

import { openai } from './openai.ts';
import { json } from './reply.ts';
import { dataEvent } from './sse.ts';
import { isObject } from './text.ts';
import { isForm } from './multipart.ts';
import { mistralError, ocr as mistralOcr } from './mistral.ts';
import type { ErrorExtra, FormatModule, Reply, RequestContext, Route } from './types.ts';

/** Azure's own error shape (platform errors: routing, auth, throttling): `{error:{code,message}}`. */
export function azureError(status: number, code: string, message: string, headers?: Record<string, string>): Reply {
  return json(status, { error: { code, message } }, headers);
}

const NOT_FOUND = (): Reply => azureError(404, '404', 'Resource not found');

const FAULT_CODES: Record<number, string> = { 500: 'InternalServerError', 503: 'ServiceUnavailable', 408: 'Timeout' };
const FAULT_MESSAGES: Record<number, string> = {
  429: 'Requests to the ChatCompletions_Create Operation under Azure OpenAI API have exceeded the token rate limit of your current pricing tier. Please retry after 1 second.',
  500: 'The server had an error while processing your request.',
  503: 'The service is temporarily unable to process your request. Please try again later.',
};

const SAFE = { filtered: false, severity: 'safe' };
const FILTERS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const PROMPT_FILTERS = [{ prompt_index: 0, content_filter_results: FILTERS }];

/** Adds Azure's content-filter annotations to a chat or text completion answer (JSON or SSE). */
function withContentFilters(reply: Reply): Reply {
  if (reply.kind === 'sse') {
    const first = dataEvent({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTERS });
    return { ...reply, events: [first, ...reply.events] };
  }
  if (reply.kind !== 'json' || reply.status !== 200) return reply;
  const body = JSON.parse(reply.body) as { choices?: Record<string, unknown>[] };
  for (const c of body.choices ?? []) c.content_filter_results = FILTERS;
  return { ...reply, body: JSON.stringify({ ...body, prompt_filter_results: PROMPT_FILTERS }) };
}

const DEPLOYMENT_PATH = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|completions|embeddings)$/;
/** Dated-API paths without a deployment, and the OpenAI path that serves each. */
const DATED_PATHS: Record<string, string> = { '/openai/responses': '/v1/responses', '/openai/models': '/v1/models' };

function isV1(path: string): boolean {
  return path.startsWith('/openai/v1/');
}

const FOUNDRY_OCR = '/providers/mistral/azure/ocr';

/** Foundry's OCR: Mistral's handler, for inline documents only. */
const foundryOcr: Route = {
  model: undefined,
  handle: (ctx) => {
    const doc = isObject(ctx.body) && isObject(ctx.body.document) ? ctx.body.document : undefined;
    const url = doc && (doc.document_url ?? (isObject(doc.image_url) ? doc.image_url.url : doc.image_url));
    if (doc && (typeof url !== 'string' || !url.startsWith('data:'))) return mistralError(400, 'Only base64-encoded documents (data URLs) are supported.', { param: 'document' });
    return mistralOcr(ctx);
  },
};

/** The OpenAI route for the same operation, its context's path (and body) rewritten to OpenAI's. */
function delegate(inner: Route, openaiPath: string, model: string | undefined, filters: boolean): Route {
  return {
    model: model ?? inner.model,
    handle: (ctx: RequestContext) => {
      // The path names the deployment; Azure ignores the body's `model`.
      const body = model !== undefined && isObject(ctx.body) ? { ...ctx.body, model } : ctx.body;
      const reply = inner.handle({ ...ctx, path: openaiPath, body });
      return filters ? withContentFilters(reply) : reply;
    },
  };
}

const CONTAINER_PATH = /^\/v1\/containers\/[^/]+$/;
const SORA_MODELS = new Set(['sora-2', 'sora-2-pro']);
const NOT_AZURE_VIDEO = /^\/v1\/videos\/(?:edits|extensions|characters)(?:\/|$)/;

const deploymentNotFound = (): Reply =>
  azureError(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.');

/** A video create: the body's `model` is a deployment, replaced by the model it runs. */
function soraDeployment(inner: Route): Route {
  return {
    model: inner.model,
    handle: (ctx) => {
      const body = ctx.body;
      const deployment = isObject(body) || isForm(body) ? (body as Record<string, unknown>).model : undefined;
      if (typeof deployment === 'string' && deployment.startsWith('nonexistent')) return deploymentNotFound();
      if (typeof deployment !== 'string') return inner.handle(ctx);
      const model = SORA_MODELS.has(deployment) ? deployment : 'sora-2';
      // A parsed form keeps its prototype (handlers tell forms from JSON by it).
      const rewritten = Object.assign(Object.create(Object.getPrototypeOf(body) as object) as object, body, { model });
      return inner.handle({ ...ctx, body: rewritten });
    },
  };
}

/** A success answered with an empty body (errors keep theirs). */
function withoutBody(route: Route): Route {
  return {
    model: route.model,
    handle: (ctx) => {
      const reply = route.handle(ctx);
      return reply.kind === 'json' && reply.status === 200 ? { ...reply, body: '', headers: { ...reply.headers, 'content-type': 'text/plain' } } : reply;
    },
  };
}

/** Foundry's partner models take the key as a bearer token. */
function foundryAuth(ctx: RequestContext): Reply | undefined {
  const auth = ctx.headers.authorization;
  const bearer = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  if (bearer && !bearer[1].startsWith('invalid')) return undefined;
  return azureError(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');
}

export const azure: FormatModule = {
  format: 'azure',
  route(method, path, body): Route | undefined {
    if (path === FOUNDRY_OCR) return method === 'POST' ? { ...foundryOcr, model: isObject(body) && typeof body.model === 'string' ? body.model : undefined } : undefined;
    const m = DEPLOYMENT_PATH.exec(path);
    if (m) {
      const deployment = decodeURIComponent(m[1]);
      const openaiPath = `/v1/${m[2]}`;
      if (deployment.startsWith('nonexistent')) {
        return { model: deployment, handle: deploymentNotFound };
      }
      const inner = openai.route(method, openaiPath, body);
      return inner && delegate(inner, openaiPath, deployment, m[2] !== 'embeddings');
    }
    const openaiPath = isV1(path) ? path.slice('/openai'.length) : DATED_PATHS[path];
    if (!openaiPath || NOT_AZURE_VIDEO.test(openaiPath)) return undefined;
    const inner = openai.route(method, openaiPath, body);
    if (inner && method === 'POST' && openaiPath === '/v1/videos') return soraDeployment(delegate(inner, openaiPath, undefined, false));
    if (inner && method === 'DELETE' && CONTAINER_PATH.test(openaiPath)) return withoutBody(delegate(inner, openaiPath, undefined, false));
    return inner && delegate(inner, openaiPath, undefined, openaiPath === '/v1/chat/completions' || openaiPath === '/v1/completions');
  },
  authenticate(ctx) {
    // Routing comes first on Azure: the dated API is not found without its api-version.
    if (ctx.path === FOUNDRY_OCR) return foundryAuth(ctx);
    if (!isV1(ctx.path) && !ctx.query['api-version']) return NOT_FOUND();
    const apiKey = ctx.headers['api-key'];
    if (typeof apiKey === 'string' && apiKey) {
      if (!apiKey.startsWith('invalid')) return undefined;
      return azureError(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');
    }
    const auth = ctx.headers.authorization;
    const bearer = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
    if (bearer && !bearer[1].startsWith('invalid')) return undefined;
    if (bearer) {
      return azureError(401, '401', 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.');
    }
    return azureError(401, '401', 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.');
  },
  error(status: number, message?: string, extra: ErrorExtra = {}): Reply {
    return azureError(status, extra.code ?? FAULT_CODES[status] ?? String(status), message ?? FAULT_MESSAGES[status] ?? `Request failed with status ${status}.`, extra.headers);
  },
  notFound: () => NOT_FOUND(),
};
