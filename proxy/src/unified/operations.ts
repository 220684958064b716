// The operations table: each operation the gateway runs through its stages appears here once, with
// what the rest of the gateway needs to know about it. Routes, execute(), async jobs, the response
// cache, MCP, the request log and the snapshot read it; how an operation reads its request and calls
// a provider is its spec (operations/<name>.ts, bound by name in operations/specs.ts). The table is
// data only, on the ground floor beside the unified types, so the snapshot, the pipeline and the
// stages read it without loading operation code. Providers declare which of these operations they offer.
/** Unified operations. `responses` is served natively where `nativeResponses`, else bridged over chat. */
export type Operation = 'chat' | 'text' | 'responses' | 'embeddings' | 'models' | 'rerank' | 'count_tokens' | 'moderation' | 'ocr' | 'decisions' | 'video_generation' | 'files' | 'batches' | 'containers' | 'realtime' | MediaOperation;
/** Image and audio operations, named as the reference gateway's `allowed_requests` keys. */
export type MediaOperation = 'image_generation' | 'image_edit' | 'image_variation' | 'speech' | 'transcription';

/** Base paths of framework SDKs (LiteLLM, LangChain, PydanticAI) pointed at the gateway. */
export const FRAMEWORK_PREFIXES = ['/litellm', '/langchain', '/pydanticai'] as const;

/**
 * Where the OpenAI-format operations are served: /v1, the /openai compatibility prefix (with and
 * without /v1, as OpenAI SDK base URLs are written both ways) and each framework prefix's /v1.
 */
export const OPENAI_PREFIXES: readonly string[] = ['/v1', '/openai/v1', '/openai', ...FRAMEWORK_PREFIXES.map((p) => `${p}/v1`)];

export interface OperationRow {
  /** execute()'s operation, the metrics `operation` label and the job row's `operation`. */
  readonly name: string;
  /** Below each of OPENAI_PREFIXES (and /v1/async/), without a leading slash; POST. */
  readonly path: string;
  /** Also served at Azure OpenAI's `/openai/openai/deployments/{deployment}/<path>` (the deployment names the model). */
  readonly azure: boolean;
  /** The log record's request_type before the call (the spec may name a `_stream` variant); also the reference gateway's `allowed_requests` key. */
  readonly requestType: string;
  /** How the request arrives: a JSON body, or a multipart form (in process: its parts), or either (by its content type). */
  readonly body: 'json' | 'form' | 'json_or_form';
  /** Served under /v1/async/<path> as a job. */
  readonly async: boolean;
  /** Its answers may be kept by the response cache. */
  readonly cache: boolean;
  /** MCP tools are added to its requests, in this request shape (agent mode included). */
  readonly mcpTools?: 'chat' | 'responses';
  /** The provider capability a target needs (providers/catalog.ts). */
  readonly capability: Operation;
  /** The log record's `object`, where it is not the request type. */
  readonly logObject?: string;
  /**
   * Its synchronous route is the Videos API's own (endpoints/videos.ts, e.g. the remix's source id
   * in its path), not the table's `POST /{path}`; the table still gives it execute() and async.
   */
  readonly ownRoute?: true;
  /** Also submitted async at this path below /async/, its `{id}` segment taken as the body's `video.id` (the Videos API's `videos/{id}/remix`). */
  readonly asyncIdPath?: string;
}

const row = <const R extends OperationRow>(r: R): R => r;

/** Order matters for the Azure deployment patterns only: see endpoints/native/azure.ts. */
export const OPERATIONS = [
  row({ name: 'chat', path: 'chat/completions', azure: true, requestType: 'chat_completion', body: 'json', async: true, cache: true, mcpTools: 'chat', capability: 'chat', logObject: 'chat.completion' }),
  row({ name: 'text', path: 'completions', azure: true, requestType: 'text_completion', body: 'json', async: true, cache: true, capability: 'text', logObject: 'text.completion' }),
  row({ name: 'responses', path: 'responses', azure: true, requestType: 'responses', body: 'json', async: true, cache: true, mcpTools: 'responses', capability: 'responses', logObject: 'response' }),
  row({ name: 'embeddings', path: 'embeddings', azure: true, requestType: 'embedding', body: 'json', async: true, cache: true, capability: 'embeddings', logObject: 'embedding' }),
  row({ name: 'rerank', path: 'rerank', azure: false, requestType: 'rerank', body: 'json', async: true, cache: false, capability: 'rerank' }),
  row({ name: 'count_tokens', path: 'responses/input_tokens', azure: false, requestType: 'count_tokens', body: 'json', async: false, cache: false, capability: 'count_tokens' }),
  row({ name: 'image_generation', path: 'images/generations', azure: true, requestType: 'image_generation', body: 'json', async: true, cache: true, capability: 'image_generation' }),
  row({ name: 'image_edit', path: 'images/edits', azure: false, requestType: 'image_edit', body: 'form', async: true, cache: false, capability: 'image_edit' }),
  row({ name: 'image_variation', path: 'images/variations', azure: false, requestType: 'image_variation', body: 'form', async: true, cache: false, capability: 'image_variation' }),
  row({ name: 'speech', path: 'audio/speech', azure: true, requestType: 'speech', body: 'json', async: true, cache: true, capability: 'speech' }),
  row({ name: 'transcription', path: 'audio/transcriptions', azure: false, requestType: 'transcription', body: 'form', async: true, cache: true, capability: 'transcription' }),
  // A moderation is a quick gate its callers wait for (bulk moderation goes through the Batch API):
  // not async; a safety verdict is the classifier's current one: not cached.
  row({ name: 'moderation', path: 'moderations', azure: false, requestType: 'moderation', body: 'json', async: false, cache: false, capability: 'moderation' }),
  // OCR of a long document takes long: async. Not cached: a URL's or a file's content may change.
  row({ name: 'ocr', path: 'ocr', azure: false, requestType: 'ocr', body: 'json', async: true, cache: false, capability: 'ocr' }),
  // Decisions in OpenAI's shape, and the same operation in the System One shape (`state` and a map
  // of questions) that other decision providers and clients speak; both are request type `decision`.
  row({ name: 'decisions', path: 'decisions', azure: false, requestType: 'decision', body: 'json', async: true, cache: false, capability: 'decisions' }),
  row({ name: 'systemone', path: 'systemone', azure: false, requestType: 'decision', body: 'json', async: true, cache: false, capability: 'decisions' }),
  // A video is a job at the provider: the answer is the job (queued), polled at /videos/{id}; the
  // async variant waits for the job to finish. Not cached: each call starts (and pays for) a job.
  // JSON or the multipart form the openai SDK sends. Management (retrieve, list, delete, content,
  // remix, edits, extensions, characters) acts on a stored video: endpoints/videos.ts.
  row({ name: 'video_generation', path: 'videos', azure: false, requestType: 'video_generation', body: 'json_or_form', async: true, cache: false, capability: 'video_generation' }),
  // A new job from a finished video of the caller's, on its provider (operations/video-derive.ts):
  // async waits for the new job, like the create. Served synchronously at the Videos API's paths.
  row({ name: 'video_remix', path: 'videos/remix', ownRoute: true, asyncIdPath: 'videos/{id}/remix', azure: false, requestType: 'video_remix', body: 'json', async: true, cache: false, capability: 'video_generation' }),
  row({ name: 'video_edit', path: 'videos/edits', ownRoute: true, azure: false, requestType: 'video_edit', body: 'json_or_form', async: true, cache: false, capability: 'video_generation' }),
  row({ name: 'video_extension', path: 'videos/extensions', ownRoute: true, azure: false, requestType: 'video_extension', body: 'json_or_form', async: true, cache: false, capability: 'video_generation' }),
] as const satisfies readonly OperationRow[];

export type OperationName = (typeof OPERATIONS)[number]['name'];

/** The rows by name, built once (a lookup per request costs one Map.get). */
export const OPERATION_BY_NAME: ReadonlyMap<string, OperationRow> = new Map(OPERATIONS.map((r) => [r.name, r]));

/**
 * The reference gateway's `allowed_requests` key of each provider capability: an operation's is its
 * request type; the HTTP-only resources (model lists, files, batches, containers) are not operations of the table.
 */
export const ALLOWED_REQUEST_KEYS: Readonly<Record<Operation, string>> = {
  // A capability's key is its first row's request type (video_generation's, not a remix's).
  ...(Object.fromEntries([...OPERATIONS].reverse().map((r) => [r.capability, r.requestType])) as Record<(typeof OPERATIONS)[number]['capability'], string>),
  models: 'list_models',
  // The reference gateway names each file, batch and container call; the create call stands for the group.
  files: 'file_upload',
  batches: 'batch_create',
  containers: 'container_create',
  // A WebSocket session (proxy/src/realtime), not a row: it has no POST path.
  realtime: 'realtime',
};
