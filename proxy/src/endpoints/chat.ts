import type { Exchange } from '../http/exchange.ts';
import { validated } from '../http/body.ts';
import { ChatRequestSchema, type ChatChunk, type ChatResponse } from '../unified/chat.ts';
import { requireOperation } from '../unified/errors.ts';
import { acceptRequest, runInference } from './inference.ts';
import { chunkStreamPlan } from './chunk-stream-plan.ts';

const parseChat = validated(ChatRequestSchema);

export async function chatCompletions(ex: Exchange): Promise<void> {
  const accepted = await acceptRequest(ex, parseChat, 'chat', 'chat_completion');
  if (!accepted) return;
  const { req: chat, targets } = accepted;
  const stream = chat.stream === true;
  await runInference<ChatResponse, ChatChunk>(ex, {
    operation: 'chat',
    requestType: stream ? 'chat_completion_stream' : 'chat_completion',
    modelRequested: chat.model,
    targets,
    build: (t, adapter) => {
      requireOperation(t.provider, 'chat');
      return adapter.chatRequest(chat, t.model, stream);
    },
    parse: (body, att, ids) => att.adapter.chatResponse(body, { model: att.target.model, ...ids }),
    usage: (out) => out.usage,
    stream: stream
      ? (att, ids) => chunkStreamPlan(att.adapter.chatStream({ model: att.target.model, ...ids }), chat.stream_options?.include_usage === true)
      : undefined,
  });
}
