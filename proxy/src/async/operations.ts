// The operations served under /v1/async: the path after the prefix, the execute() operation that
// runs the job, the request type a job reports (webhook `data.request_type`), and how the request
// arrives (a JSON body or a multipart form).
export interface AsyncOperation {
  /** After /v1/async/ (and the sync twin's path after /v1/). */
  path: string;
  /** The execute() operation. */
  operation: 'chat' | 'text' | 'responses' | 'embeddings' | 'speech' | 'transcription' | 'image_generation' | 'image_edit' | 'image_variation' | 'rerank';
  requestType: string;
  form: boolean;
}

export const ASYNC_OPERATIONS: readonly AsyncOperation[] = [
  { path: 'chat/completions', operation: 'chat', requestType: 'chat_completion', form: false },
  { path: 'completions', operation: 'text', requestType: 'text_completion', form: false },
  { path: 'responses', operation: 'responses', requestType: 'responses', form: false },
  { path: 'embeddings', operation: 'embeddings', requestType: 'embedding', form: false },
  { path: 'audio/speech', operation: 'speech', requestType: 'speech', form: false },
  { path: 'audio/transcriptions', operation: 'transcription', requestType: 'transcription', form: true },
  { path: 'images/generations', operation: 'image_generation', requestType: 'image_generation', form: false },
  { path: 'images/edits', operation: 'image_edit', requestType: 'image_edit', form: true },
  { path: 'images/variations', operation: 'image_variation', requestType: 'image_variation', form: true },
  { path: 'rerank', operation: 'rerank', requestType: 'rerank', form: false },
];

export const resultUrl = (path: string, id: string): string => `/v1/async/${path}/${id}`;
