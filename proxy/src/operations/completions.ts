import { validated } from '../http/body.ts';
import { nullsAbsent } from '../unified/nulls.ts';
import { TextRequestSchema, textToChat, chatToText, chatChunkToText, type TextRequest, type TextResponse } from '../unified/text.ts';
import { asUsage, type ChatChunk } from '../unified/chat.ts';
import { unsupportedOperation } from '../unified/errors.ts';
import { readJson, type OperationSpec } from './inference.ts';
import { chunkStreamPlan, mapSource } from './chunk-stream-plan.ts';
import { objectList } from '../unified/answer-shape.ts';

const parseText = nullsAbsent(validated(TextRequestSchema));
const EMULATED = 'chat_completion';

export const textSpec: OperationSpec<TextRequest> = {
  read: (ctx) => readJson(ctx, parseText),
  spec: (text, ctx) => {
    const stream = text.stream === true;
    const convert = ctx.snapshot.convertTextToChat;
    const relayText = ctx.http !== undefined;
    return {
      requestType: stream ? 'text_completion_stream' : 'text_completion',
      modelRequested: text.model,
      build: (t, adapter) => {
        if (t.provider.operations.has('text') && adapter.textRequest) return adapter.textRequest(text, t.model, stream);
        if (!convert || !t.provider.operations.has('chat')) throw unsupportedOperation(t.provider.name, 'text_completion');
        return adapter.chatRequest(textToChat(text), t.model, stream);
      },
      parse: (body, att, ids) =>
        att.up.requestType === EMULATED ? chatToText(att.adapter.chatResponse(body, ids)) : checked(body),
      usage: asUsage,
      passthrough: (att) => relayText && att.up.requestType === 'text_completion',
      stream: stream
        ? (att, ids) =>
            // Native text chunks come through the OpenAI chat stream parser unchanged (it only parses JSON).
            chunkStreamPlan(mapSource(att.adapter.chatStream(ids), toTextChunk), text.stream_options?.include_usage === true)
        : undefined,
    };
  },
};

/** A native text completion: a `choices` list of objects. */
function checked(body: unknown): TextResponse {
  objectList(body, 'choices');
  return body as TextResponse;
}

function toTextChunk(c: ChatChunk | TextResponse): TextResponse {
  return c.object === 'text_completion' ? c : chatChunkToText(c);
}
