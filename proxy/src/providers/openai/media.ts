// OpenAI's image and audio endpoints: the unified requests are this wire format, so building the
// upstream request means setting the bare model and dropping the gateway's own fields. Multipart
// forms are re-encoded with the model part first.
import type { UpstreamRequest } from '../adapter.ts';
import type { FormOperation, FormRequest, ImageGenerationRequest, SpeechRequest } from '../../unified/media.ts';
import { encodeMultipart } from '../../upstream/form-encode.ts';
import { toUpstreamBody } from './body.ts';

const FORM_PATHS: Record<FormOperation, string> = {
  image_edit: '/images/edits',
  image_variation: '/images/variations',
  transcription: '/audio/transcriptions',
};

export function toOpenAIImageGeneration(req: ImageGenerationRequest, model: string): UpstreamRequest {
  return { method: 'POST', path: '/images/generations', requestType: 'image_generation', body: toUpstreamBody(req, model), stream: req.stream === true };
}

export function toOpenAIForm(op: FormOperation, form: FormRequest, model: string): UpstreamRequest {
  const payload = encodeMultipart([{ name: 'model', value: model }, ...form.parts]);
  return { method: 'POST', path: FORM_PATHS[op], requestType: op, payload, stream: form.stream };
}

export function toOpenAISpeech(req: SpeechRequest, model: string): UpstreamRequest {
  const sse = req.stream_format === 'sse';
  // Audio is streamed either way, so the stream idle timeout (not the JSON one) applies between chunks.
  return { method: 'POST', path: '/audio/speech', requestType: 'speech', body: toUpstreamBody(req, model), stream: true, accept: sse ? 'text/event-stream' : '*/*' };
}
