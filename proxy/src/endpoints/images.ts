// POST /v1/images/generations (JSON), /v1/images/edits and /v1/images/variations (multipart).
// Answers are OpenAI's images shape; `stream: true` relays the provider's image events.
import type { Exchange } from '../http/exchange.ts';
import { validated } from '../http/body.ts';
import { ImageGenerationRequestSchema, mediaUsage, type ImageResponse } from '../unified/media.ts';
import { requireOperation, unsupportedOperation } from '../unified/errors.ts';
import { acceptRequest, runInference } from './inference.ts';
import { acceptForm, formBuild } from './media-form.ts';
import { mediaEventPlan, type MediaEvent } from './media-stream-plan.ts';
import { objectList } from '../unified/answer-shape.ts';

/** OpenAI's images answer: a `data` list of objects. */
function imageAnswer(body: unknown): ImageResponse {
  objectList(body, 'data');
  return body as ImageResponse;
}

const parseGeneration = validated(ImageGenerationRequestSchema);

export async function imageGenerations(ex: Exchange): Promise<void> {
  const accepted = await acceptRequest(ex, parseGeneration, 'image_generation', 'image_generation');
  if (!accepted) return;
  const { req, targets } = accepted;
  await runInference<ImageResponse, MediaEvent>(ex, {
    operation: 'image_generation',
    requestType: 'image_generation',
    modelRequested: req.model,
    targets,
    build: (t, adapter) => {
      requireOperation(t.provider, 'image_generation');
      if (!adapter.imageGenerationRequest) throw unsupportedOperation(t.provider.name, 'image_generation');
      return adapter.imageGenerationRequest(req, t.model);
    },
    parse: (body, att) => att.adapter.imageGenerationResponse?.(body, req, att.target.model) ?? imageAnswer(body),
    usage: mediaUsage,
    // Formats without their own translation answer in OpenAI's shape already.
    passthrough: (att) => !att.adapter.imageGenerationResponse,
    stream: req.stream ? () => mediaEventPlan() : undefined,
  });
}

export const imageEdits = (ex: Exchange): Promise<void> => imageForm(ex, 'image_edit');
export const imageVariations = (ex: Exchange): Promise<void> => imageForm(ex, 'image_variation');

async function imageForm(ex: Exchange, op: 'image_edit' | 'image_variation'): Promise<void> {
  const accepted = await acceptForm(ex, op);
  if (!accepted) return;
  const { form, targets } = accepted;
  await runInference<ImageResponse, MediaEvent>(ex, {
    operation: op,
    requestType: op,
    modelRequested: form.model,
    targets,
    build: formBuild(op, form),
    parse: imageAnswer,
    usage: mediaUsage,
    passthrough: () => true,
    stream: form.stream ? () => mediaEventPlan() : undefined,
  });
}
