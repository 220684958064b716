// One provider's list-models answer, all pages, as `provider/model` entries: for /v1/models and the
// native lists, and for the governance model catalog (kept apart from both so neither imports the other).
import type { ProviderRuntime } from '../providers/runtime.ts';
import type { ModelEntry } from '../unified/models.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { sendUpstream } from './upstream-call.ts';
import { GatewayError } from '../unified/errors.ts';

/** A provider that paginates forever is cut off here. */
const MAX_PAGES = 20;

export async function providerModels(p: ProviderRuntime, signal: AbortSignal, keyIds?: ReadonlySet<string>): Promise<ModelEntry[]> {
  const adapter = ADAPTERS[p.kind.format];
  const enabled = p.keys.filter((k) => k.weight > 0 && (!keyIds || keyIds.has(k.id)));
  const key = enabled[0] ?? (keyIds ? undefined : p.keys[0]);
  const out: ModelEntry[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const up = adapter.modelsRequest(token);
    const answer = await sendUpstream(p, adapter, key, up, undefined, signal);
    let parsed: ReturnType<typeof adapter.modelsResponse>;
    try {
      parsed = adapter.modelsResponse(await answer.json());
      if (!Array.isArray(parsed.models)) throw new TypeError('models is not a list');
    } catch (err) {
      // Already the right answer (a body that is not JSON, or too large).
      if (err instanceof GatewayError) throw err;
      throw new GatewayError(502, `provider '${p.name}' answered list-models with a body of the wrong shape (${(err as Error).message})`, {
        type: 'upstream_invalid_response',
        provider: p.name,
        upstream: true,
      });
    }
    for (const m of parsed.models) out.push({ ...m, id: `${p.name}/${m.id}`, object: 'model', owned_by: p.name });
    token = parsed.nextPageToken;
    if (!token) break;
  }
  return out;
}
