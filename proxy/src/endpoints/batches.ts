// /v1/batches (create, list), /v1/batches/{id} (retrieve), /v1/batches/{id}/cancel: OpenAI's Batch
// API, forwarded to an OpenAI-format provider that has it. The provider comes from the body's
// `provider` field, the `provider` query parameter, the `x-model-provider` header, or the prefix of
// the reference gateway's `model` field (`openai/gpt-4o-mini`); else the first that offers batches.
import { parseJson, readBody } from '../http/body.ts';
import { invalidRequest } from '../unified/errors.ts';
import { resolveTarget } from '../governance/targets.ts';
import { chooseProvider, forwardedQuery, httpRequestOf, namedProvider, resourceRoute } from './provider-resources.ts';

/** Gateway fields of the reference gateway's create request; OpenAI's API takes none of them. */
const GATEWAY_FIELDS = ['provider', 'model', 'fallbacks'];

function parseCreate(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (b.input_file_id === undefined && b.requests !== undefined) {
    throw invalidRequest('inline batch requests are not supported here: upload a .jsonl file to /v1/files and pass its input_file_id', 'requests');
  }
  for (const f of ['input_file_id', 'endpoint', 'completion_window']) {
    if (typeof b[f] !== 'string' || !b[f]) throw invalidRequest(`'${f}' is required`, f);
  }
  if (b.provider !== undefined && typeof b.provider !== 'string') throw invalidRequest("'provider' must be a provider name", 'provider');
  if (b.model !== undefined && typeof b.model !== 'string') throw invalidRequest("'model' must be a 'provider/model' string", 'model');
  return b;
}

export const createBatch = resourceRoute('batches', 'batch_create', async (ctx) => {
  const b = parseCreate(parseJson(await readBody(httpRequestOf(ctx), ctx.snapshot.maxBodyBytes)));
  const byModel = () => (typeof b.model === 'string' && b.model ? resolveTarget(ctx.snapshot, b.model).provider.name : undefined);
  const provider = chooseProvider(ctx, 'batches', namedProvider(ctx, b.provider) ?? byModel());
  const body = Object.fromEntries(Object.entries(b).filter(([k]) => !GATEWAY_FIELDS.includes(k)));
  return { provider, up: { method: 'POST', path: '/batches', requestType: 'batch_create', body, stream: false } };
});

export const listBatches = resourceRoute('batches', 'batch_list', async (ctx) => {
  const provider = chooseProvider(ctx, 'batches', namedProvider(ctx));
  return { provider, up: { method: 'GET', path: `/batches${forwardedQuery(ctx)}`, requestType: 'batch_list', stream: false } };
});

function byId(requestType: string, method: 'GET' | 'POST', suffix = '') {
  return resourceRoute('batches', requestType, async (ctx) => {
    const provider = chooseProvider(ctx, 'batches', namedProvider(ctx));
    const path = `/batches/${encodeURIComponent(ctx.params[0])}${suffix}`;
    return { provider, up: { method, path, requestType, stream: false } };
  });
}

export const retrieveBatch = byId('batch_retrieve', 'GET');
export const cancelBatch = byId('batch_cancel', 'POST', '/cancel');
