import type { Exchange } from '../http/exchange.ts';
import { validated } from '../http/body.ts';
import { nullsAbsent } from '../unified/nulls.ts';
import { ChatRequestSchema, asUsage, type ChatChunk, type ChatResponse } from '../unified/chat.ts';
import { requireOperation } from '../unified/errors.ts';
import { acceptRequest, runInference } from './inference.ts';
import { chunkStreamPlan, passthroughChunkPlan, type PassthroughChunk } from './chunk-stream-plan.ts';
import { openaiAdapter } from '../providers/openai/adapter.ts';

const parseChat = nullsAbsent(validated(ChatRequestSchema));

export async function chatCompletions(ex: Exchange): Promise<void> {
  const accepted = await acceptRequest(ex, parseChat, 'chat', 'chat_completion');
  if (!accepted) return;
  const { req: chat, targets } = accepted;
  const stream = chat.stream === true;
  await runInference<ChatResponse, ChatChunk | PassthroughChunk>(ex, {
    operation: 'chat',
    requestType: stream ? 'chat_completion_stream' : 'chat_completion',
    modelRequested: chat.model,
    targets,
    build: (t, adapter) => {
      requireOperation(t.provider, 'chat');
      return adapter.chatRequest(chat, t.model, stream);
    },
    parse: (body, att, ids) => att.adapter.chatResponse(body, { model: att.target.model, ...ids }),
    usage: asUsage,
    passthrough: (att) => att.adapter === openaiAdapter,
    stream: stream
      ? (att, ids) => {
          const includeUsage = chat.stream_options?.include_usage === true;
          if (att.adapter === openaiAdapter && !att.target.provider.sendBackRawResponse) return passthroughChunkPlan(includeUsage);
          return chunkStreamPlan(att.adapter.chatStream({ model: att.target.model, ...ids }), includeUsage);
        }
      : undefined,
  });
}
