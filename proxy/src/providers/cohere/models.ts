// GET /v1/models page -> provider model page. Cohere paginates with page_token/next_page_token.
import { GatewayError } from '../../unified/errors.ts';
import type { ProviderModel, ProviderModelPage } from '../../unified/models.ts';
import type { CohereModel } from './types.ts';

export function fromCohereModels(body: unknown): ProviderModelPage {
  const list = typeof body === 'object' && body !== null ? (body as { models?: unknown; next_page_token?: unknown }) : undefined;
  if (!list || !Array.isArray(list.models)) {
    throw new GatewayError(502, 'cohere returned an unexpected models list', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'cohere', upstream: true });
  }
  const models = (list.models as unknown[]).filter(isModel).map(toModel);
  const page: ProviderModelPage = { models };
  if (typeof list.next_page_token === 'string' && list.next_page_token) page.nextPageToken = list.next_page_token;
  return page;
}

function toModel(m: CohereModel): ProviderModel {
  const model: ProviderModel = { id: m.name };
  if (typeof m.context_length === 'number') model.context_length = m.context_length;
  if (Array.isArray(m.endpoints) && m.endpoints.length > 0) model.description = `endpoints: ${m.endpoints.join(', ')}`;
  return model;
}

function isModel(v: unknown): v is CohereModel {
  return typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string' && (v as { name: string }).name !== '';
}
