// POST /anthropic/v1/complete: Anthropic's legacy Text Completions in front of every provider, run
// as a chat completion (today's models, Anthropic's included, only do chat) and answered in the
// legacy shape, JSON or `completion` SSE events, errors in Anthropic's shape.
import { randomUUID } from 'node:crypto';
import type { Exchange } from '../../http/exchange.ts';
import { requireOperation } from '../../unified/errors.ts';
import {
  createCompletionStreamEncoder,
  encodeCompletionEvent,
  fromAnthropicComplete,
  toAnthropicCompletion,
  type AnthropicCompletion,
} from '../../providers/anthropic/native/complete.ts';
import { toAnthropicError } from '../../providers/anthropic/native/error.ts';
import { acceptRequest, runInference } from '../inference.ts';
import { encodedStreamPlan, type EncodedItem } from '../chunk-stream-plan.ts';

export async function anthropicComplete(ex: Exchange): Promise<void> {
  const accepted = await acceptRequest(ex, fromAnthropicComplete, 'chat', 'text_completion', toAnthropicError);
  if (!accepted) return;
  const { req, targets } = accepted;
  const stream = req.stream === true;
  const id = `compl_${randomUUID().replace(/-/g, '')}`;
  await runInference<AnthropicCompletion, EncodedItem>(ex, {
    operation: 'chat',
    requestType: stream ? 'text_completion_stream' : 'text_completion',
    modelRequested: req.model,
    targets,
    build: (t, adapter) => {
      requireOperation(t.provider, 'chat');
      return adapter.chatRequest(req, t.model, stream);
    },
    parse: (body, att, ids) => toAnthropicCompletion(att.adapter.chatResponse(body, { model: att.target.model, ...ids }), req, id),
    usage: (u) => {
      const v = u as AnthropicCompletion['usage'];
      return v ? { prompt_tokens: v.input_tokens, completion_tokens: v.output_tokens, total_tokens: v.input_tokens + v.output_tokens } : undefined;
    },
    errorBody: toAnthropicError,
    stream: stream
      ? (att, ids) =>
          encodedStreamPlan(
            att.adapter.chatStream({ model: att.target.model, ...ids }),
            createCompletionStreamEncoder(req, id),
            encodeCompletionEvent,
            (err) => `event: error\ndata: ${JSON.stringify(toAnthropicError(err).body)}\n\n`,
          )
      : undefined,
  });
}
