import { validated } from '../http/body.ts';
import { nullsAbsent } from '../unified/nulls.ts';
import { ChatRequestSchema, asUsage, type ChatRequest } from '../unified/chat.ts';
import { requireOperation } from '../unified/errors.ts';
import { readJson, type OperationSpec, withModel } from './inference.ts';
import { chunkStreamPlan, passthroughChunkPlan } from './chunk-stream-plan.ts';
import { openaiAdapter } from '../providers/openai/adapter.ts';

const parseChat = nullsAbsent(validated(ChatRequestSchema));

export const chatSpec: OperationSpec<ChatRequest> = {
  read: (ctx) => readJson(ctx, parseChat),
  spec: (chat, ctx) => {
    const stream = chat.stream === true;
    // In process, answers are read as values: the text fast paths are for HTTP clients.
    const relayText = ctx.http !== undefined;
    return {
      requestType: stream ? 'chat_completion_stream' : 'chat_completion',
      modelRequested: chat.model,
      build: (t, adapter) => {
        requireOperation(t.provider, 'chat');
        return adapter.chatRequest(chat, t.model, stream);
      },
      parse: (body, att, ids) => att.adapter.chatResponse(body, withModel(ids, att.target.model)),
      usage: asUsage,
      passthrough: (att) => relayText && att.adapter === openaiAdapter,
      stream: stream
        ? (att, ids) => {
            const includeUsage = chat.stream_options?.include_usage === true;
            if (relayText && att.adapter === openaiAdapter && !att.target.provider.sendBackRawResponse) return passthroughChunkPlan(includeUsage);
            return chunkStreamPlan(att.adapter.chatStream(withModel(ids, att.target.model)), includeUsage);
          }
        : undefined,
    };
  },
};
