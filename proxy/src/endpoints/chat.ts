import type { Exchange } from '../http/exchange.ts';
import { parseJson, readBody, validated } from '../http/body.ts';
import { ChatRequestSchema, type ChatChunk, type ChatResponse } from '../unified/chat.ts';
import { resolveTargets } from '../pipeline/target.ts';
import { requireOperation } from '../unified/errors.ts';
import { failEarly, runInference } from './inference.ts';
import { chunkStreamPlan } from './chunk-stream-plan.ts';

const parseChat = validated(ChatRequestSchema);

export async function chatCompletions(ex: Exchange): Promise<void> {
  let req;
  let targets;
  try {
    req = parseChat(parseJson(await readBody(ex.req, ex.snapshot.maxBodyBytes)));
    targets = resolveTargets(ex.snapshot, req.model, req.fallbacks);
  } catch (err) {
    return failEarly(ex, 'chat', 'chat_completion', err);
  }
  const chat = req;
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
