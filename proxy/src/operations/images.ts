// POST /v1/images/generations (JSON), /v1/images/edits and /v1/images/variations (multipart).
// Answers are OpenAI's images shape; `stream: true` relays the provider's image events.
import { validated } from '../http/body.ts';
import { ImageGenerationRequestSchema, mediaUsage, type FormRequest, type ImageGenerationRequest, type ImageResponse } from '../unified/media.ts';
import { buildBy, readJson, type OperationSpec } from './inference.ts';
import { formBuild, readFormRequest } from './media-form.ts';
import { mediaEventPlan } from './media-stream-plan.ts';
import { objectList } from '../unified/answer-shape.ts';

/** OpenAI's images answer: a `data` list of objects. */
function imageAnswer(body: unknown): ImageResponse {
  objectList(body, 'data');
  return body as ImageResponse;
}

const parseGeneration = validated(ImageGenerationRequestSchema);

export const imageGenerationSpec: OperationSpec<ImageGenerationRequest> = {
  read: (ctx) => readJson(ctx, parseGeneration),
  spec: (req) => ({
    requestType: 'image_generation',
    modelRequested: req.model,
    build: buildBy('image_generation', req, (a, r, model) => a.imageGenerationRequest?.(r, model)),
    parse: (body, att) => att.adapter.imageGenerationResponse?.(body, req, att.target.model) ?? imageAnswer(body),
    usage: mediaUsage,
    // Formats without their own translation answer in OpenAI's shape already.
    passthrough: (att) => !att.adapter.imageGenerationResponse,
    stream: req.stream ? () => mediaEventPlan() : undefined,
  }),
};

function imageForm(op: 'image_edit' | 'image_variation'): OperationSpec<FormRequest> {
  return {
    read: (ctx) => readFormRequest(ctx, op),
    spec: (form) => ({
      requestType: op,
      modelRequested: form.model,
      build: formBuild(op, form),
      parse: imageAnswer,
      usage: mediaUsage,
      passthrough: () => true,
      stream: form.stream ? () => mediaEventPlan() : undefined,
    }),
  };
}

export const imageEditSpec = imageForm('image_edit');
export const imageVariationSpec = imageForm('image_variation');
