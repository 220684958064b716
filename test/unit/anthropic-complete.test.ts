// Legacy Anthropic Text Completions over chat: the prompt's turns, and answers and chunks back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createCompletionStreamEncoder,
  fromAnthropicComplete,
  promptToMessages,
  toAnthropicCompletion,
} from '../../proxy/src/providers/anthropic/native/complete.ts';
import type { ChatChunk } from '../../proxy/src/unified/chat.ts';

test('turns become messages: system text first, a prefilled Assistant turn last', () => {
  assert.deepEqual(promptToMessages('Be kind.\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: And now?\n\nAssistant: {'), [
    { role: 'system', content: 'Be kind.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
    { role: 'user', content: 'And now?' },
    { role: 'assistant', content: '{' },
  ]);
  // Trailing whitespace is trimmed before the check, as the legacy API does.
  assert.deepEqual(promptToMessages('\n\nHuman: Hi\n\nAssistant: '), [{ role: 'user', content: 'Hi' }]);
});

test('the legacy validation rules', () => {
  assert.throws(() => promptToMessages('Hello'), /must start with/);
  assert.throws(() => promptToMessages('\n\nAssistant: x\n\nHuman: y\n\nAssistant:'), /must start with/);
  assert.throws(() => promptToMessages('\n\nHuman: y'), /must end with/);
  assert.throws(() => fromAnthropicComplete({ model: 'm', prompt: '\n\nHuman: y\n\nAssistant:' }), /max_tokens_to_sample/);
});

test('the request maps onto chat fields', () => {
  const chat = fromAnthropicComplete({
    model: 'm', prompt: '\n\nHuman: y\n\nAssistant:', max_tokens_to_sample: 9, stop_sequences: ['END'], top_p: 0.5, top_k: 3,
    metadata: { user_id: 'u1' }, stream: true,
  });
  assert.deepEqual(chat, {
    model: 'm', messages: [{ role: 'user', content: 'y' }], max_tokens: 9, top_p: 0.5, stop: ['END'], user: 'u1',
    stream: true, stream_options: { include_usage: true },
  });
});

test('answers: a leading space unless prefilled; length is max_tokens', () => {
  const req = fromAnthropicComplete({ model: 'm', prompt: '\n\nHuman: y\n\nAssistant:', max_tokens_to_sample: 9 });
  const res = { id: 'x', object: 'chat.completion' as const, created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant' as const, content: 'Hi there' }, finish_reason: 'length' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
  assert.deepEqual(toAnthropicCompletion(res, req, 'compl_1'), {
    type: 'completion', id: 'compl_1', completion: ' Hi there', stop_reason: 'max_tokens', model: 'm', usage: { input_tokens: 1, output_tokens: 2 },
  });
  const prefilled = fromAnthropicComplete({ model: 'm', prompt: '\n\nHuman: y\n\nAssistant: {', max_tokens_to_sample: 9 });
  assert.equal(toAnthropicCompletion(res, prefilled, 'c').completion, 'Hi there');
});

test('stream: text events, then one empty completion with the stop reason', () => {
  const req = fromAnthropicComplete({ model: 'm', prompt: '\n\nHuman: y\n\nAssistant:', max_tokens_to_sample: 9, stream: true });
  const enc = createCompletionStreamEncoder(req, 'compl_2');
  const chunk = (content: string | undefined, finish: string | null): ChatChunk => ({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish }] });
  const events = [...enc.push(chunk('Hi', null)), ...enc.push(chunk(' there', null)), ...enc.push(chunk(undefined, 'stop')), ...enc.finish()];
  assert.deepEqual(events.map((e) => [e.completion, e.stop_reason]), [[' Hi', null], [' there', null], ['', 'stop_sequence']]);
});
