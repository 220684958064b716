// Veo's API the other way round, for the GenAI front door (@google/genai's generateVideos and
// getVideosOperation through /genai): a predictLongRunning body becomes the unified video create,
// and the gateway's video becomes a Gemini API long-running operation. The operation's name is
// `models/{model}/operations/{the gateway's video id}`; the finished video's URI is the gateway's
// own content URL, fetched with the same key.
import type { Video, VideoCreateBody } from '../../../unified/video.ts';
import { isObject } from '../../../unified/answer-shape.ts';
import { invalidRequest } from '../../../unified/errors.ts';

/** A predictLongRunning body as the create's JSON body (checked by the create's own schema after). */
export function fromVeoRequest(body: unknown, model: string): Partial<VideoCreateBody> & { model: string } {
  if (!isObject(body)) throw invalidRequest('request body must be a JSON object');
  if (!Array.isArray(body.instances) || body.instances.length !== 1 || !isObject(body.instances[0])) {
    throw invalidRequest("'instances' must hold exactly one instance", 'instances');
  }
  const inst = body.instances[0];
  const p = isObject(body.parameters) ? body.parameters : {};
  if (p.sampleCount !== undefined && p.sampleCount !== 1) throw invalidRequest("'parameters.sampleCount' must be 1: one video per operation", 'parameters.sampleCount');
  const out: Partial<VideoCreateBody> & { model: string } = { model };
  if (typeof inst.prompt === 'string') out.prompt = inst.prompt;
  else if (inst.prompt !== undefined) throw invalidRequest("'instances[0].prompt' must be a string", 'instances[0].prompt');
  if (inst.image !== undefined) {
    const img = inst.image;
    if (!isObject(img) || typeof img.bytesBase64Encoded !== 'string' || typeof img.mimeType !== 'string') {
      throw invalidRequest("'instances[0].image' must have bytesBase64Encoded and mimeType", 'instances[0].image');
    }
    out.input_reference = { image_url: `data:${img.mimeType};base64,${img.bytesBase64Encoded}` };
  }
  if (p.durationSeconds !== undefined) {
    if (typeof p.durationSeconds !== 'number' || !Number.isInteger(p.durationSeconds)) throw invalidRequest("'parameters.durationSeconds' must be a whole number", 'parameters.durationSeconds');
    out.seconds = String(p.durationSeconds);
  }
  const size = veoRequestSize(p.aspectRatio, p.resolution);
  if (size) out.size = size;
  if (typeof p.negativePrompt === 'string') out.negative_prompt = p.negativePrompt;
  return out;
}

/** `16:9` at `1080p` as `1920x1080`; undefined when neither is given. */
function veoRequestSize(aspectRatio: unknown, resolution: unknown): string | undefined {
  if (aspectRatio === undefined && resolution === undefined) return undefined;
  if (aspectRatio !== undefined && aspectRatio !== '16:9' && aspectRatio !== '9:16') throw invalidRequest("'parameters.aspectRatio' must be '16:9' or '9:16'", 'parameters.aspectRatio');
  const short = resolution === undefined || resolution === '720p' ? 720 : resolution === '1080p' ? 1080 : resolution === '4k' ? 2160 : undefined;
  if (short === undefined) throw invalidRequest("'parameters.resolution' must be '720p', '1080p' or '4k'", 'parameters.resolution');
  const long = Math.round((short * 16) / 9);
  return aspectRatio === '9:16' ? `${short}x${long}` : `${long}x${short}`;
}

/** The operation name of a gateway video made for `model`. */
export const veoOperationName = (model: string, id: string): string => `models/${model}/operations/${id}`;

/** The video as a Gemini API operation; `contentUri` is where its bytes are served. */
export function toVeoOperation(video: Video, model: string, contentUri: string): Record<string, unknown> {
  const name = veoOperationName(model, video.id);
  if (video.status === 'queued' || video.status === 'in_progress') return { name, metadata: { progress: video.progress } };
  if (video.status === 'failed') return { name, done: true, error: { code: 13, message: video.error?.message ?? 'the video job failed', status: 'INTERNAL' } };
  return {
    name,
    done: true,
    response: {
      '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
      generateVideoResponse: { generatedSamples: [{ video: { uri: contentUri, mimeType: 'video/mp4' } }] },
    },
  };
}
