// POST /anthropic/v1/complete: Anthropic's legacy Text Completions in front of every provider, run
// as a chat completion (today's models, Anthropic's included, only do chat) and answered in the
// legacy shape, JSON or `completion` SSE events, errors in Anthropic's shape.
import { randomUUID } from 'node:crypto';
import {
  createCompletionStreamEncoder,
  encodeCompletionEvent,
  fromAnthropicComplete,
  toAnthropicCompletion,
  type AnthropicCompletion,
} from '../../providers/anthropic/native/complete.ts';
import { toAnthropicError } from '../../providers/anthropic/native/error.ts';
import { nativeChat } from './native-chat.ts';
import { encodedStreamPlan } from '../../operations/chunk-stream-plan.ts';

const completionId = () => `compl_${randomUUID().replace(/-/g, '')}`;

export const anthropicComplete = nativeChat<AnthropicCompletion>({
  parse: fromAnthropicComplete,
  requestType: 'text_completion',
  answer: (res, req) => toAnthropicCompletion(res, req, completionId()),
  usage: (u) => {
    const v = u as AnthropicCompletion['usage'];
    return v ? { prompt_tokens: v.input_tokens, completion_tokens: v.output_tokens, total_tokens: v.input_tokens + v.output_tokens } : undefined;
  },
  errorBody: toAnthropicError,
  stream: (chunks, req) =>
    encodedStreamPlan(chunks, createCompletionStreamEncoder(req, completionId()), encodeCompletionEvent, (err) => `event: error\ndata: ${JSON.stringify(toAnthropicError(err).body)}\n\n`),
});
