// A proxy parses a rendered document reusing the objects of the resources whose text did not change
// (config/parse-reusing.ts): the answer is always JSON.parse's, and an edit parses one object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ParseMemo, objectSpans } from '../../proxy/src/config/parse-reusing.ts';
import { stableStringify } from '../../operator/src/render/stable-json.ts';

const doc = (description: string) => ({
  providers: { openai: { keys: [{ name: 'k', value: 'env.A' }] }, anthropic: { network_config: { max_retries: 1 } } },
  governance: { virtual_keys: [{ id: 'vk-1', description }, { id: 'vk-2', description: 'same' }], budgets: [] },
  client: { compat: { convert_text_to_chat: true } },
});

test('a rendered document parses to what JSON.parse gives; an edit reuses every other object', () => {
  const memo = new ParseMemo();
  const first = stableStringify(doc('one'));
  const a = memo.parse(first) as ReturnType<typeof doc>;
  assert.deepEqual(a, JSON.parse(first));
  const second = stableStringify(doc('two'));
  const b = memo.parse(second) as ReturnType<typeof doc>;
  assert.deepEqual(b, JSON.parse(second));
  assert.equal(b.providers.openai, a.providers.openai, 'unchanged provider: the same object');
  assert.equal(b.governance.virtual_keys[1], a.governance.virtual_keys[1], 'unchanged key: the same object');
  assert.notEqual(b.governance.virtual_keys[0], a.governance.virtual_keys[0], 'the edited key is parsed again');
  assert.equal(b.governance.virtual_keys[0].description, 'two');
  assert.equal(memo.stats.wholeParses, 0);
  assert.ok(memo.stats.reused >= 4, `reused ${memo.stats.reused}`);
});

test('two objects with the same text in one document are two objects, as JSON.parse gives', () => {
  const memo = new ParseMemo();
  const text = stableStringify({ governance: { virtual_keys: [{ id: 'x' }, { id: 'x' }] } });
  memo.parse(text);
  const again = memo.parse(text) as { governance: { virtual_keys: object[] } };
  assert.notEqual(again.governance.virtual_keys[0], again.governance.virtual_keys[1]);
  assert.deepEqual(again, JSON.parse(text));
});

test('another layout, a misplaced brace or invalid JSON: JSON.parse of the whole, with its error', () => {
  const memo = new ParseMemo();
  const compact = JSON.stringify(doc('c'));
  assert.deepEqual(memo.parse(compact), JSON.parse(compact));
  assert.equal(memo.stats.wholeParses, 1);
  // A closing line at the opener's indent that is not the object's end: the span does not parse alone.
  const odd = '{\n  "providers": {\n    "a": {\n      "b": {\n    }\n    }\n  }\n}\n';
  assert.deepEqual(memo.parse(odd), JSON.parse(odd));
  assert.equal(memo.stats.wholeParses, 2);
  const bad = stableStringify(doc('x')).replace('"vk-2"', '"vk-2');
  assert.throws(() => memo.parse(bad), SyntaxError);
  // A key __proto__ stays an own key, as JSON.parse makes it.
  const proto = '{\n  "providers": {\n    "__proto__": {\n      "x": 1\n    }\n  }\n}\n';
  const parsed = memo.parse(proto) as { providers: Record<string, unknown> };
  assert.deepEqual(Object.keys(parsed.providers), ['__proto__']);
  assert.equal(Object.getPrototypeOf(parsed.providers), Object.prototype);
});

test('a string that looks like an opener or a placeholder changes nothing', () => {
  const memo = new ParseMemo();
  const value = { providers: { a: { note: '    "x": {', other: '\u0000skybridge-object-0' } }, webhooks: [{ name: 'w', headers: { h: '}' } }] };
  const text = stableStringify(value);
  assert.deepEqual(memo.parse(text), JSON.parse(text));
  assert.deepEqual(memo.parse(text), JSON.parse(text));
  assert.equal(objectSpans(text).length, 2);
});
