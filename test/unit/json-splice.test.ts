import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendMember, extractObject } from '../../proxy/src/unified/json-splice.ts';

test('appendMember adds a last member that parses back', () => {
  const text = JSON.stringify({ id: 'x', choices: [{ message: { content: 'a } b' } }] }, null, 2) + '\n';
  const out = appendMember(text, 'extra_fields', { provider: 'openai', n: 1 })!;
  assert.deepEqual(JSON.parse(out), { id: 'x', choices: [{ message: { content: 'a } b' } }], extra_fields: { provider: 'openai', n: 1 } });
  assert.deepEqual(JSON.parse(appendMember('{}', 'k', 1)!), { k: 1 });
  assert.equal(appendMember('[1,2]', 'k', 1), undefined);
});

test('extractObject finds the real member, not look-alikes inside strings', () => {
  const body = {
    choices: [{ message: { content: 'the "usage": {"prompt_tokens": 999} is fake', tool_calls: [{ function: { arguments: '{"usage":{"x":1}}' } }] } }],
    usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8, details: { note: 'a } brace "quoted"' } },
  };
  assert.deepEqual(extractObject(JSON.stringify(body), 'usage'), body.usage);
  assert.deepEqual(extractObject(JSON.stringify(body, null, 2), 'usage'), body.usage);
  assert.equal(extractObject(JSON.stringify({ usage: null }), 'usage'), undefined);
  assert.equal(extractObject('{"a":1}', 'usage'), undefined);
});
