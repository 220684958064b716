// GET /v1/models: every configured provider's list-models answer, merged under `provider/model` ids;
// the native lists (/anthropic, /genai) answer the same merged list in their own shapes. Listing
// spends the providers' keys, so it is governed like inference: a virtual key where one is
// required, only the providers (and models) the key allows, and its limits count the request.
import type { ProviderRuntime } from '../providers/runtime.ts';
import type { ModelEntry, ModelListResponse } from '../unified/models.ts';
import { GatewayError, invalidRequest, requireOperation } from '../unified/errors.ts';
import { log } from '../log.ts';
import { grantFor } from '../governance/stages.ts';
import { providerModels } from '../pipeline/provider-models.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Accept, Execute } from '../pipeline/runner.ts';
import type { ErrorRenderer } from '../http/respond.ts';
import { httpRoute } from './serve.ts';

interface ListRequest {
  /** A provider named with `?provider=` (its own errors are the answer), or null: every provider. */
  only: string | null;
  pageSize: number | undefined;
  offset: number;
}

/** A model list route: `paged` reads /v1's provider and page parameters; `render` shapes the answer. */
export function modelList(render: (models: ModelEntry[], req: ListRequest) => unknown, opts: { paged: boolean; requestType?: string; renderError?: ErrorRenderer }) {
  const execute: Execute = async (ctx) => {
    const req = ctx.request as ListRequest;
    return { kind: 'json', status: 200, value: render(await collectModels(ctx, req.only), req) };
  };
  const accept: Accept = async (ctx) => {
    const q = opts.paged ? ctx.query() : undefined;
    const req: ListRequest = {
      only: q?.get('provider') ?? null,
      pageSize: parsePageSize(q?.get('page_size') ?? null),
      offset: parsePageToken(q?.get('page_token') ?? null),
    };
    ctx.request = req;
    ctx.scope = { kind: 'providers', providers: listed(ctx, req.only) };
    return execute;
  };
  return httpRoute({ operation: 'models', requestType: opts.requestType, renderError: opts.renderError }, accept);
}

/** The providers a list spans: the named one (checked), or every one offering list-models. */
function listed(ctx: RequestContext, only: string | null): ProviderRuntime[] {
  if (only === null) return [...ctx.snapshot.providers.values()].filter((p) => p.operations.has('models'));
  const p = ctx.snapshot.providers.get(only);
  if (!p) throw invalidRequest(`provider '${only}' is not configured on this gateway`, 'provider');
  requireOperation(p, 'models');
  if (ctx.vk) grantFor(ctx.vk, only);
  ctx.access.provider = only;
  ctx.provider = only;
  return [p];
}

/** The planned providers' models (the caller's key's models only), as `provider/model` entries. */
async function collectModels(ctx: RequestContext, only: string | null): Promise<ModelEntry[]> {
  const providers = ctx.scope.kind === 'providers' ? ctx.scope.providers : [];
  const lists = await Promise.all(
    providers.map((p) => {
      const grant = ctx.vk?.grants.find((g) => g.provider === p.name);
      const keyIds = grant && grant.keyIds !== '*' ? grant.keyIds : undefined;
      return providerModels(p, ctx.signal, keyIds).then(
        (models) => (grant && grant.models !== '*' ? models.filter((m) => (grant.models as ReadonlySet<string>).has(m.id.slice(p.name.length + 1))) : models),
        (err: unknown) => {
          // One provider down must not hide the others; asked for by name, its error is the answer.
          if (only !== null) throw err;
          log.warn('list-models failed for a provider', { provider: p.name, error: (err as Error).message });
          return [] as ModelEntry[];
        },
      );
    }),
  );
  return lists.flat();
}

export const listModels = modelList(
  (all, req) => {
    const end = req.pageSize === undefined ? all.length : req.offset + req.pageSize;
    const body: ModelListResponse = { object: 'list', data: all.slice(req.offset, end) };
    if (end < all.length) body.next_page_token = Buffer.from(String(end)).toString('base64url');
    return body;
  },
  { paged: true, requestType: 'list_models' },
);

function parsePageSize(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw invalidRequest('page_size must be an integer >= 0', 'page_size');
  return n === 0 ? undefined : n;
}

function parsePageToken(v: string | null): number {
  if (v === null || v === '') return 0;
  const n = Number(Buffer.from(v, 'base64url').toString());
  if (!Number.isInteger(n) || n < 0) throw new GatewayError(400, 'page_token is not a token this gateway issued', { param: 'page_token' });
  return n;
}
