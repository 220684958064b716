// Veo's API at the GenAI front door, so @google/genai's generateVideos and getVideosOperation work
// through /genai against any provider with video generation (Veo on Gemini or Vertex, Sora on
// OpenAI): POST /genai/v1beta/models/{model}:predictLongRunning starts a video as POST /v1/videos
// does (the same record, governance and pricing), answered as a long-running operation named
// `models/{model}/operations/{video id}`; GET /genai/v1beta/{that name} polls it as
// GET /v1/videos/{id} does. The finished operation's video URI is the gateway's
// /v1/videos/{id}/content. Errors are Gemini's error object.
import type { Exchange } from '../../http/exchange.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import { fromVeoRequest, toVeoOperation } from '../../providers/gemini/native/video.ts';
import { toGeminiError } from '../../providers/gemini/native/error.ts';
import { readJson } from '../../operations/inference.ts';
import { createVideo, parseCreate, videoGenerationSpec } from '../../operations/video.ts';
import { refreshVideo } from '../../operations/video-jobs.ts';
import { videoView } from '../../state/videos.ts';
import type { Video } from '../../unified/video.ts';
import { httpInference } from '../serve.ts';
import { onVideo } from '../videos.ts';

/** Where the client fetches the bytes: this gateway's content route, as the client reached it. */
function contentUri(ctx: RequestContext, id: string): string {
  const host = typeof ctx.headers.host === 'string' ? ctx.headers.host : 'localhost';
  const proto = ctx.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
  return `${proto}://${host}/v1/videos/${id}/content`;
}

const generateVideos = httpInference({
  operation: 'video_generation',
  requestType: 'video_generation',
  errorBody: toGeminiError,
  read: (ctx) => readJson(ctx, (body) => parseCreate(fromVeoRequest(body, ctx.params[0] ?? ''))),
  spec: videoGenerationSpec.spec,
  run: async (req, ctx) => {
    const out = await createVideo(req, ctx);
    const video = out.value as Video;
    return { kind: 'json', status: 200, value: toVeoOperation(video, ctx.params[0] ?? '', contentUri(ctx, video.id)) };
  },
});

const getOperation = onVideo(
  'video_retrieve',
  async (ctx, { store, rec, provider }) => {
    const video = videoView(await refreshVideo(ctx, store, provider, rec));
    return { kind: 'json', status: 200, value: toVeoOperation(video, ctx.params[0] ?? '', contentUri(ctx, video.id)) };
  },
  { input: async () => undefined, source: (_input, ctx) => ctx.params[1] ?? '', param: 'name' },
  toGeminiError,
);

export const GENAI_VIDEO_PATTERNS: [string, { POST?: (ex: Exchange) => Promise<void>; GET?: (ex: Exchange) => Promise<void> }][] = [
  ['/genai/v1beta/models/(.+):predictLongRunning', { POST: generateVideos }],
  ['/genai/v1beta/models/(.+)/operations/([^/]+)', { GET: getOperation }],
];
