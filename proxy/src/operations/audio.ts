// POST /v1/audio/speech (JSON in, the provider's audio bytes streamed out) and
// /v1/audio/transcriptions (multipart in; JSON, plain text, SRT or VTT out, or SSE transcript events).
import { validated } from '../http/body.ts';
import { mediaUsage, SPEECH_CONTENT_TYPES, SpeechRequestSchema, type FormRequest, type SpeechRequest, type TranscriptionResponse } from '../unified/media.ts';
import { GatewayError } from '../unified/errors.ts';
import { buildBy, readJson, type OperationSpec } from './inference.ts';
import { formBuild, readFormRequest } from './media-form.ts';
import { mediaEventPlan } from './media-stream-plan.ts';
import { checkStringField } from '../unified/answer-shape.ts';

const parseSpeech = validated(SpeechRequestSchema);

/** Transcript formats answered as text, not JSON. */
const TEXT_FORMATS = new Set(['text', 'srt', 'vtt']);

export const speechSpec: OperationSpec<SpeechRequest> = {
  read: (ctx) => readJson(ctx, parseSpeech),
  spec: (req) => {
    const sse = req.stream_format === 'sse';
    return {
      requestType: 'speech',
      modelRequested: req.model,
      build: buildBy('speech', req, (a, r, model) => a.speechRequest?.(r, model)),
      parse: () => {
        throw new GatewayError(500, 'speech answers are relayed, not parsed', { type: 'internal_error' });
      },
      usage: mediaUsage,
      stream: sse ? () => mediaEventPlan() : undefined,
      relay: sse ? undefined : SPEECH_CONTENT_TYPES[req.response_format ?? 'mp3'],
    };
  },
};

export const transcriptionSpec: OperationSpec<FormRequest> = {
  read: (ctx) => readFormRequest(ctx, 'transcription'),
  spec: (form) => {
    const textual = TEXT_FORMATS.has(form.fields.response_format ?? 'json');
    return {
      requestType: 'transcription',
      modelRequested: form.model,
      build: formBuild('transcription', form),
      parse: (body) => {
        checkStringField(body, 'text');
        return body as TranscriptionResponse;
      },
      usage: mediaUsage,
      passthrough: () => true,
      stream: form.stream ? () => mediaEventPlan() : undefined,
      relay: textual && !form.stream ? 'text/plain; charset=utf-8' : undefined,
    };
  },
};
