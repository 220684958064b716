import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendMember, appendMemberSized, extractObject } from '../../proxy/src/unified/json-splice.ts';

test('appendMember adds a last member that parses back', () => {
  const text = JSON.stringify({ id: 'x', choices: [{ message: { content: 'a } b' } }] }, null, 2) + '\n';
  const out = appendMember(text, 'extra_fields', { provider: 'openai', n: 1 })!;
  assert.deepEqual(JSON.parse(out), { id: 'x', choices: [{ message: { content: 'a } b' } }], extra_fields: { provider: 'openai', n: 1 } });
  assert.deepEqual(JSON.parse(appendMember('{}', 'k', 1)!), { k: 1 });
  // An empty object with JSON's whitespace inside takes no comma; one with a member does.
  assert.deepEqual(JSON.parse(appendMember('{ \n\t\r }\n', 'k', 1)!), { k: 1 });
  assert.deepEqual(JSON.parse(appendMember('{"a":{} \n}', 'k', 1)!), { a: {}, k: 1 });
  assert.equal(appendMember('[1,2]', 'k', 1), undefined);
});

test('appendMemberSized: the same text, and its UTF-8 length (the answer\'s content-length) exact for any text', () => {
  const texts = [
    '{}',
    '{"id":"x","usage":{"prompt_tokens":1}}',
    '{"content":"caf\u00e9 \u4e2d\u6587 \ud83d\ude00"}',
    // A lone surrogate goes out as U+FFFD (3 bytes), before the brace and in the member alike.
    '{"a":"x"\ud800}',
    '{\n  "a": "\u00ff"\n}\n',
  ];
  for (const text of texts) {
    for (const value of [{ provider: 'openai', model_requested: 'm\u00fcnchen/\ud83d\ude00' }, { bad: '\udc00' }, 1]) {
      const sized = appendMemberSized(text, 'extra_fields', value)!;
      assert.equal(sized.text, appendMember(text, 'extra_fields', value));
      assert.equal(sized.bytes, Buffer.byteLength(sized.text), text);
    }
  }
  assert.equal(appendMemberSized('[1]', 'k', 1), undefined);
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
