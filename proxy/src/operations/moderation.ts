// POST /v1/moderations: OpenAI's moderation API (is this text or image harmful, per category), on
// providers that declare the `moderation` capability (OpenAI, and custom providers based on it).
// The answer is OpenAI's, relayed as it came; there is no usage to charge.
import { validated } from '../http/body.ts';
import { ModerationRequestSchema, type ModerationRequest, type ModerationResponse } from '../unified/moderation.ts';
import { objectList } from '../unified/answer-shape.ts';
import { buildBy, readJson, type OperationSpec } from './inference.ts';

const parseModeration = validated(ModerationRequestSchema);

/** OpenAI's moderation answer: a `results` list of objects. */
function moderationAnswer(body: unknown): ModerationResponse {
  objectList(body, 'results');
  return body as ModerationResponse;
}

export const moderationSpec: OperationSpec<ModerationRequest> = {
  read: (ctx) => readJson(ctx, parseModeration),
  spec: (req, ctx) => ({
    requestType: 'moderation',
    modelRequested: req.model,
    build: buildBy('moderation', req, (a, r, model) => a.moderationRequest?.(r, model)),
    parse: (body) => moderationAnswer(body),
    // A moderation generates nothing and reports no tokens.
    usage: () => undefined,
    // Over HTTP the checked answer goes as received, extra_fields spliced in.
    passthrough: () => ctx.http !== undefined,
  }),
};
