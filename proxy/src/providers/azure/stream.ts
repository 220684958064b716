// Azure OpenAI streams are OpenAI chunks plus content-filter annotations: the first chunk carries
// only `prompt_filter_results` (empty `choices`, empty id and model), and with asynchronous
// filtering a choice may arrive with filter results but no `delta`. Clients of the gateway expect
// OpenAI's stream, so filter-only chunks are dropped and a missing delta becomes an empty one.
import type { ChatChunk } from '../../unified/chat.ts';
import type { SseEvent, StreamTranslator } from '../../unified/stream.ts';

export function createAzureStreamTranslator(): StreamTranslator {
  return {
    push(ev: SseEvent): ChatChunk[] {
      if (ev.data === '[DONE]') return [];
      const chunk = JSON.parse(ev.data) as ChatChunk;
      if (!chunk.choices?.length) return chunk.usage ? [chunk] : [];
      // Legacy text completion chunks (`text` choices) share this stream shape and need no delta.
      if (chunk.object === 'chat.completion.chunk') {
        for (const choice of chunk.choices as { delta?: unknown }[]) choice.delta ??= {};
      }
      return [chunk];
    },
    finish: () => [],
  };
}
