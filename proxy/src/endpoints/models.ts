// GET /v1/models: every configured provider's list-models answer, merged under `provider/model` ids.
import type { Exchange } from '../http/exchange.ts';
import { sendError, sendJson } from '../http/respond.ts';
import type { ModelEntry, ModelListResponse } from '../unified/models.ts';
import { GatewayError, invalidRequest, requireOperation } from '../unified/errors.ts';
import { log } from '../log.ts';
import { callerOf, governProviderList, grantFor } from '../governance/provider-call.ts';
import { providerModels } from './provider-models.ts';

export { providerModels };

export async function listModels(ex: Exchange): Promise<void> {
  try {
    const q = ex.query();
    const pageSize = parsePageSize(q.get('page_size'));
    const offset = parsePageToken(q.get('page_token'));
    const all = await collectModels(ex, q.get('provider'));
    const end = pageSize === undefined ? all.length : offset + pageSize;
    const body: ModelListResponse = { object: 'list', data: all.slice(offset, end) };
    if (end < all.length) body.next_page_token = Buffer.from(String(end)).toString('base64url');
    sendJson(ex.res, 200, body);
  } catch (err) {
    sendError(ex.res, err, { request_type: 'list_models' });
  }
}

/**
 * Every configured provider's models (or one provider's, by name), as `provider/model` entries.
 * Listing spends the providers' keys, so it is governed like inference: a virtual key where one is
 * required, only the providers (and models) the key allows, and its limits count the request.
 */
export async function collectModels(ex: Exchange, only: string | null): Promise<ModelEntry[]> {
  const vk = callerOf(ex);
  let providers = [...ex.snapshot.providers.values()];
  if (only !== null) {
    const p = ex.snapshot.providers.get(only);
    if (!p) throw invalidRequest(`provider '${only}' is not configured on this gateway`, 'provider');
    requireOperation(p, 'models');
    if (vk) grantFor(vk, only);
    ex.access.provider = only;
    providers = [p];
  } else {
    providers = providers.filter((p) => p.operations.has('models'));
  }
  const governed = await governProviderList(ex, providers, vk);
  const lists = await Promise.all(
    governed.providers.map((p) => {
      const grant = governed.vk?.grants.find((g) => g.provider === p.name);
      const keyIds = grant && grant.keyIds !== '*' ? grant.keyIds : undefined;
      return providerModels(p, ex.signal, keyIds).then(
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
