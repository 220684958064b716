// GET /v1beta/models → one page of provider models.
import type { ProviderModel, ProviderModelPage } from '../../unified/models.ts';

export function fromGeminiModels(body: unknown): ProviderModelPage {
  const record = isRecord(body) ? body : {};
  const models = (Array.isArray(record.models) ? record.models : []).filter(isRecord).flatMap((m): ProviderModel[] => {
    if (typeof m.name !== 'string' || !m.name) return [];
    const model: ProviderModel = { id: m.name.replace(/^models\//, '') };
    if (typeof m.displayName === 'string') model.name = m.displayName;
    if (typeof m.description === 'string') model.description = m.description;
    if (typeof m.inputTokenLimit === 'number') {
      model.max_input_tokens = m.inputTokenLimit;
      model.context_length = m.inputTokenLimit;
    }
    if (typeof m.outputTokenLimit === 'number') model.max_output_tokens = m.outputTokenLimit;
    return [model];
  });
  const page: ProviderModelPage = { models };
  if (typeof record.nextPageToken === 'string' && record.nextPageToken) page.nextPageToken = record.nextPageToken;
  return page;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
