/** One entry of GET /v1/models; `id` is `<provider>/<model>`. */
export interface ModelEntry {
  id: string;
  object: 'model';
  owned_by: string;
  created?: number;
  name?: string;
  description?: string;
  context_length?: number;
  max_input_tokens?: number;
  max_output_tokens?: number;
}

/** A model as one provider lists it: `id` is the provider's own model name, no prefix. */
export type ProviderModel = Omit<ModelEntry, 'id' | 'object' | 'owned_by'> & { id: string };

/** What a provider translator extracts from one page of the provider's list-models answer. */
export interface ProviderModelPage {
  models: ProviderModel[];
  /** Opaque cursor for the next page, when the provider paginates. */
  nextPageToken?: string;
}

export interface ModelListResponse {
  object: 'list';
  data: ModelEntry[];
  next_page_token?: string;
}
