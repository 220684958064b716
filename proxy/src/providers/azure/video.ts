// Sora 2 on Azure OpenAI: the v1 API's `/openai/v1/videos` is OpenAI's Videos API ("aligns with
// OpenAI's native Sora 2 schema"), the deployment named in the create form's `model` (sign.ts maps
// it per key) and the calls on a video by its id: retrieve, content (`?variant=`), delete and remix.
// Azure documents no edits, extensions or characters: those answer `unsupported_operation`.
import type { VideoAdapter } from '../adapter.ts';
import { openaiVideo } from '../openai/video.ts';

const { create, state, asked, contentById, retrieve, content, delete: remove, remix } = openaiVideo;

export const azureVideo: VideoAdapter = { create, state, asked, contentById, retrieve, content, delete: remove, remix };
