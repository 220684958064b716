// Veo on Vertex AI (cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation):
// POST .../publishers/google/models/{model}:predictLongRunning starts the operation, and
// POST .../models/{model}:fetchPredictOperation with its `operationName` polls it. A finished
// operation carries `response.videos[]`: the bytes inline (`bytesBase64Encoded`) when the request
// named no storage bucket, which is how the gateway asks, or a `gcsUri`.
import type { VideoAdapter } from '../adapter.ts';
import type { VideoJobState } from '../../unified/video.ts';
import { isObject, ShapeError } from '../../unified/answer-shape.ts';
import { veoAsked, veoRequestBody } from '../gemini/video.ts';
import { publisherModelPath } from './paths.ts';

/** A Vertex operation (predictLongRunning's answer, or fetchPredictOperation's) as the job's state. */
export function vertexVideoState(body: unknown): VideoJobState {
  if (!isObject(body) || typeof body.name !== 'string' || !body.name) throw new ShapeError("the operation has no 'name'");
  const base = { upstreamId: body.name };
  if (body.done !== true) return { ...base, status: 'in_progress', progress: 0 };
  if (isObject(body.error)) {
    return { ...base, status: 'failed', progress: 100, error: { code: typeof body.error.code === 'number' ? `upstream_${body.error.code}` : 'video_failed', message: String(body.error.message ?? 'the video operation failed') } };
  }
  const res = isObject(body.response) ? body.response : {};
  const videos = Array.isArray(res.videos) ? res.videos.filter(isObject) : [];
  const video = videos[0];
  if (!video) {
    const filtered = typeof res.raiMediaFilteredCount === 'number' && res.raiMediaFilteredCount > 0;
    const error = filtered
      ? { code: 'content_filtered', message: "the provider's safety filter withheld the video" }
      : { code: 'no_video', message: 'the operation finished without a video' };
    return { ...base, status: 'failed', progress: 100, error };
  }
  const mimeType = typeof video.mimeType === 'string' ? video.mimeType : 'video/mp4';
  if (typeof video.bytesBase64Encoded === 'string') return { ...base, status: 'completed', progress: 100, content: { kind: 'inline', base64: video.bytesBase64Encoded, mimeType } };
  if (typeof video.gcsUri === 'string') return { ...base, status: 'completed', progress: 100, content: { kind: 'gcs', uri: video.gcsUri } };
  throw new ShapeError('the finished operation names no video');
}

/** The model an operation name belongs to: `projects/p/locations/l/publishers/google/models/{model}/operations/{id}`. */
function modelOf(name: string, fallback: string): string {
  const m = /\/models\/([^/]+)\/operations\//.exec(name);
  return m ? decodeURIComponent(m[1]) : fallback;
}

export const vertexVideo: VideoAdapter = {
  create: (req, model) => ({
    method: 'POST',
    path: publisherModelPath('google', model, 'predictLongRunning'),
    requestType: 'video_generation',
    body: veoRequestBody(req, true),
    stream: false,
  }),
  state: vertexVideoState,
  asked: veoAsked,
  retrieve: (name, model) => ({
    method: 'POST',
    path: publisherModelPath('google', modelOf(name, model), 'fetchPredictOperation'),
    requestType: 'video_retrieve',
    body: { operationName: name },
    stream: false,
  }),
  // Inline bytes are decoded by the caller; a gcsUri lives in the customer's bucket, not this API.
  content: () => undefined,
};
