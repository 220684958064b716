// POST /v1/audio/speech (JSON in, the provider's audio bytes streamed out) and
// /v1/audio/transcriptions (multipart in; JSON, plain text, SRT or VTT out, or SSE transcript events).
import type { Exchange } from '../http/exchange.ts';
import { validated } from '../http/body.ts';
import { mediaUsage, SPEECH_CONTENT_TYPES, SpeechRequestSchema, type TranscriptionResponse } from '../unified/media.ts';
import { GatewayError, requireOperation, unsupportedOperation } from '../unified/errors.ts';
import { relayBody } from '../pipeline/body-relay.ts';
import { acceptRequest, runInference } from './inference.ts';
import { acceptForm, formBuild } from './media-form.ts';
import { mediaEventPlan, type MediaEvent } from './media-stream-plan.ts';
import { checkStringField } from '../unified/answer-shape.ts';

const parseSpeech = validated(SpeechRequestSchema);

/** Transcript formats answered as text, not JSON. */
const TEXT_FORMATS = new Set(['text', 'srt', 'vtt']);

export async function speech(ex: Exchange): Promise<void> {
  const accepted = await acceptRequest(ex, parseSpeech, 'speech', 'speech');
  if (!accepted) return;
  const { req, targets } = accepted;
  const sse = req.stream_format === 'sse';
  const contentType = SPEECH_CONTENT_TYPES[req.response_format ?? 'mp3'];
  await runInference<never, MediaEvent>(ex, {
    operation: 'speech',
    requestType: 'speech',
    modelRequested: req.model,
    targets,
    build: (t, adapter) => {
      requireOperation(t.provider, 'speech');
      if (!adapter.speechRequest) throw unsupportedOperation(t.provider.name, 'speech');
      return adapter.speechRequest(req, t.model);
    },
    parse: () => {
      throw new GatewayError(500, 'speech answers are relayed, not parsed', { type: 'internal_error' });
    },
    usage: mediaUsage,
    stream: sse ? () => mediaEventPlan() : undefined,
    relay: sse ? undefined : (att, x) => relayBody(x.res, att.answer, { provider: att.target.provider.name, signal: x.signal, fallbackType: contentType }),
  });
}

export async function transcriptions(ex: Exchange): Promise<void> {
  const accepted = await acceptForm(ex, 'transcription');
  if (!accepted) return;
  const { form, targets } = accepted;
  const textual = TEXT_FORMATS.has(form.fields.response_format ?? 'json');
  await runInference<TranscriptionResponse, MediaEvent>(ex, {
    operation: 'transcription',
    requestType: 'transcription',
    modelRequested: form.model,
    targets,
    build: formBuild('transcription', form),
    parse: (body) => {
      checkStringField(body, 'text');
      return body as TranscriptionResponse;
    },
    usage: mediaUsage,
    passthrough: () => true,
    stream: form.stream ? () => mediaEventPlan() : undefined,
    relay: textual && !form.stream
      ? (att, x) => relayBody(x.res, att.answer, { provider: att.target.provider.name, signal: x.signal, fallbackType: 'text/plain; charset=utf-8' })
      : undefined,
  });
}
