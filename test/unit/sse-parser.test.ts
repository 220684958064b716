import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseParser } from '../../proxy/src/upstream/sse.ts';

test('events split across arbitrary byte boundaries come out whole', () => {
  const text = 'event: message_start\ndata: {"a":1}\n\n: comment\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n';
  const bytes = Buffer.from(text);
  for (const size of [1, 2, 3, 7, 64]) {
    const p = new SseParser();
    const out = [];
    for (let i = 0; i < bytes.length; i += size) out.push(...p.push(bytes.subarray(i, i + size)));
    out.push(...p.end());
    assert.deepEqual(out, [{ event: 'message_start', data: '{"a":1}' }, { data: 'line1\nline2' }, { data: '[DONE]' }], `chunk size ${size}`);
  }
});

test('CRLF and lone CR line endings (Gemini uses CRLF)', () => {
  const p = new SseParser();
  const out = [...p.push('data: {"x":1}\r\n\r\ndata: {"y":2}\r'), ...p.push('\r\ndata: z\r\r'), ...p.end()];
  assert.deepEqual(out, [{ data: '{"x":1}' }, { data: '{"y":2}' }, { data: 'z' }]);
});

test('multi-byte UTF-8 split between chunks is decoded intact', () => {
  const bytes = Buffer.from('data: héllo 🌍\n\n');
  const p = new SseParser();
  const out = [...p.push(bytes.subarray(0, 9)), ...p.push(bytes.subarray(9, 14)), ...p.push(bytes.subarray(14))];
  assert.deepEqual(out, [{ data: 'héllo 🌍' }]);
});

test('an unterminated last event is delivered at end of stream', () => {
  const p = new SseParser();
  assert.deepEqual(p.push('data: tail'), []);
  assert.deepEqual(p.end(), [{ data: 'tail' }]);
});
