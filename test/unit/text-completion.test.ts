import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatChunkToText, chatToText, textToChat } from '../../proxy/src/unified/text.ts';
import { toOpenAIChatRequest } from '../../proxy/src/providers/openai/adapter.ts';

test('a text prompt becomes one user message with the sampling fields kept', () => {
  const chat = textToChat({ model: 'anthropic/claude', prompt: ['Once upon'], max_tokens: 20, temperature: 0.3, stop: '\n', stream: true });
  assert.deepEqual(chat, { model: 'anthropic/claude', messages: [{ role: 'user', content: 'Once upon' }], max_tokens: 20, temperature: 0.3, stop: '\n', stream: true });
  assert.throws(() => textToChat({ model: 'm', prompt: [1, 2, 3] }), /one string prompt/);
});

test('chat answers and chunks read back as text completions', () => {
  const res = chatToText({
    id: 'c1', object: 'chat.completion', created: 5, model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'a time' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
  });
  assert.deepEqual(res, { id: 'c1', object: 'text_completion', created: 5, model: 'm', choices: [{ index: 0, text: 'a time', finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 } });
  const chunk = chatChunkToText({ id: 'c1', object: 'chat.completion.chunk', created: 5, model: 'm', choices: [{ index: 0, delta: { content: ' there' }, finish_reason: null }] });
  assert.equal(chunk.choices[0].text, ' there');
  assert.equal(chunk.object, 'text_completion');
});

test('OpenAI upstream body: gateway fields removed, usage always requested when streaming', () => {
  const body = toOpenAIChatRequest(
    { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }], fallbacks: ['anthropic/c'], reasoning: { effort: 'high' }, stream: true },
    'gpt-4o',
    true,
  );
  assert.deepEqual(body, { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high', stream: true, stream_options: { include_usage: true } });
});
