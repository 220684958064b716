// GET /v1/models page -> provider model page. Anthropic paginates with after_id; the next page's
// cursor is this page's last_id.
import { GatewayError } from '../../unified/errors.ts';
import type { ProviderModel, ProviderModelPage } from '../../unified/models.ts';
import type { AnthropicModelInfo } from './types.ts';

export function fromAnthropicModels(body: unknown): ProviderModelPage {
  const list = isRecord(body) ? body : undefined;
  if (!list || !Array.isArray(list.data)) {
    throw new GatewayError(502, 'anthropic returned an unexpected models list', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'anthropic', upstream: true });
  }
  const models = (list.data as unknown[]).filter(isModel).map(toModel);
  const page: ProviderModelPage = { models };
  if (list.has_more === true && typeof list.last_id === 'string' && list.last_id) page.nextPageToken = list.last_id;
  return page;
}

function toModel(m: AnthropicModelInfo): ProviderModel {
  const model: ProviderModel = { id: m.id };
  if (typeof m.display_name === 'string' && m.display_name) model.name = m.display_name;
  const created = typeof m.created_at === 'string' ? Date.parse(m.created_at) : NaN;
  if (!Number.isNaN(created)) model.created = Math.floor(created / 1000);
  // Anthropic's input limit is the whole context window; max_tokens is the output cap.
  if (typeof m.max_input_tokens === 'number') {
    model.context_length = m.max_input_tokens;
    model.max_input_tokens = m.max_input_tokens;
  }
  if (typeof m.max_tokens === 'number') model.max_output_tokens = m.max_tokens;
  return model;
}

function isModel(v: unknown): v is AnthropicModelInfo {
  return isRecord(v) && typeof v.id === 'string' && v.id !== '';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
