// Each row of the operations table bound to its spec file: the one place the table meets operation
// code. Built once at start; the compiler refuses a row without a spec.
import { OPERATIONS, type OperationName } from '../unified/operations.ts';
import type { InferenceRoute, ModelRequest, OperationSpec } from './inference.ts';
import { chatSpec } from './chat.ts';
import { textSpec } from './completions.ts';
import { responsesSpec } from './responses.ts';
import { embeddingsSpec } from './embeddings.ts';
import { rerankSpec } from './rerank.ts';
import { inputTokensSpec } from './count-tokens.ts';
import { imageEditSpec, imageGenerationSpec, imageVariationSpec } from './images.ts';
import { speechSpec, transcriptionSpec } from './audio.ts';
import { moderationSpec } from './moderation.ts';
import { videoGenerationSpec } from './video.ts';
import { videoEditSpec, videoExtensionSpec, videoRemixSpec } from './video-derive.ts';
import { ocrSpec } from './ocr.ts';
import { decisionsSpec, systemOneSpec } from './decisions.ts';

const SPECS: { readonly [N in OperationName]: OperationSpec<ModelRequest> } = {
  chat: chatSpec,
  text: textSpec,
  responses: responsesSpec,
  embeddings: embeddingsSpec,
  rerank: rerankSpec,
  count_tokens: inputTokensSpec,
  image_generation: imageGenerationSpec,
  image_edit: imageEditSpec,
  image_variation: imageVariationSpec,
  speech: speechSpec,
  transcription: transcriptionSpec,
  moderation: moderationSpec,
  video_generation: videoGenerationSpec,
  video_remix: videoRemixSpec,
  video_edit: videoEditSpec,
  video_extension: videoExtensionSpec,
  ocr: ocrSpec,
  decisions: decisionsSpec,
  systemone: systemOneSpec,
};

/** Each operation's spec with its name (the metrics label) and request type from the table. */
export const OPERATION_ROUTES: ReadonlyMap<OperationName, InferenceRoute<ModelRequest>> = new Map(
  OPERATIONS.map((row) => [row.name, { ...SPECS[row.name], operation: row.name, op: row, requestType: row.requestType }]),
);
