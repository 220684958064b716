// GET /v1/models: every configured provider's list-models answer, merged under `provider/model` ids.
import type { Exchange } from '../http/exchange.ts';
import { sendError, sendJson } from '../http/respond.ts';
import type { ProviderRuntime } from '../config/snapshot.ts';
import type { ModelEntry, ModelListResponse } from '../unified/models.ts';
import { GatewayError, invalidRequest, requireOperation } from '../unified/errors.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { sendUpstream } from '../pipeline/upstream-call.ts';
import { log } from '../log.ts';

/** A provider that paginates forever is cut off here. */
const MAX_PAGES = 20;

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

/** Every configured provider's models (or one provider's, by name), as `provider/model` entries. */
export async function collectModels(ex: Exchange, only: string | null): Promise<ModelEntry[]> {
  let providers = [...ex.snapshot.providers.values()];
  if (only !== null) {
    const p = ex.snapshot.providers.get(only);
    if (!p) throw invalidRequest(`provider '${only}' is not configured on this gateway`, 'provider');
    requireOperation(p, 'models');
    providers = [p];
  } else {
    providers = providers.filter((p) => p.operations.has('models'));
  }
  const lists = await Promise.all(
    providers.map((p) =>
      providerModels(p, ex.signal).catch((err: unknown) => {
        // One provider down must not hide the others; asked for by name, its error is the answer.
        if (only !== null) throw err;
        log.warn('list-models failed for a provider', { provider: p.name, error: (err as Error).message });
        return [] as ModelEntry[];
      }),
    ),
  );
  return lists.flat();
}

export async function providerModels(p: ProviderRuntime, signal: AbortSignal): Promise<ModelEntry[]> {
  const adapter = ADAPTERS[p.kind.format];
  const key = p.keys.find((k) => k.weight > 0) ?? p.keys[0];
  const out: ModelEntry[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const up = adapter.modelsRequest(token);
    const answer = await sendUpstream(p, adapter, key, up, undefined, signal);
    const parsed = adapter.modelsResponse(await answer.body.json());
    for (const m of parsed.models) out.push({ ...m, id: `${p.name}/${m.id}`, object: 'model', owned_by: p.name });
    token = parsed.nextPageToken;
    if (!token) break;
  }
  return out;
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
