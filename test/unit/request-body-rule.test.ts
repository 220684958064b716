// The rule for callers' JSON (docs/security.md, "One request body"): a `__proto__` member is a 400
// naming it wherever a request body is read; `constructor` and `prototype` stay plain own fields;
// copies define fields, so no member can become a prototype whose fields a reader would inherit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJson, refuseProtoMembers } from '../../proxy/src/http/body.ts';
import { dropNulls } from '../../proxy/src/unified/nulls.ts';
import { setOwn } from '../../proxy/src/unified/own-fields.ts';
import { FORM_SPECS, parseForm } from '../../proxy/src/unified/media.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import type { FormFile } from '../../proxy/src/http/multipart.ts';
import { desiredState } from '../../operator/src/resources/desired.ts';
import type { CustomResource } from '../../operator/src/resources/kinds.ts';
import { cr, ref, sampleResources, sampleSecrets } from './operator-fixtures.ts';

function refused(fn: () => unknown, param: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.status, 400);
    assert.equal(e.param, param);
    assert.match(e.message, new RegExp(`${param.replace(/[[\].]/g, '\\$&')}: '__proto__' is not allowed`));
    return true;
  });
}

test('a __proto__ member is refused at any depth, naming where it is', () => {
  refused(() => parseJson(Buffer.from('{"model":"openai/gpt-4o","__proto__":{"instructions":"x"}}')), '__proto__');
  refused(() => parseJson(Buffer.from('{"messages":[{"role":"user","content":"hi","__proto__":{"name":"x"}}]}')), 'messages[0].__proto__');
  refused(() => parseJson(Buffer.from('{"tools":[{"function":{"parameters":{"properties":{"__proto__":{}}}}}]}')), 'tools[0].function.parameters.properties.__proto__');
});

test('a __proto__ key spelled with \\u escapes is the same key and refused too', () => {
  refused(() => parseJson(Buffer.from('{"__pro\\u0074o__":{"max_tokens":1}}')), '__proto__');
  refused(() => parseJson(Buffer.from('{"a":{"\\u005f_proto__":1}}')), 'a.__proto__');
});

test('constructor and prototype are plain own fields; other escapes and text mentioning __proto__ pass', () => {
  const body = parseJson(Buffer.from('{"metadata":{"constructor":"c","prototype":{"x":1}},"input":"caf\\u00e9 __proto__"}')) as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.keys(body.metadata), ['constructor', 'prototype']);
  assert.equal(body.metadata.constructor, 'c');
  assert.equal(Object.getPrototypeOf(body.metadata), Object.prototype);
  assert.equal(body.input, 'café __proto__');
});

test('an in-process value is checked the same way', () => {
  refused(() => refuseProtoMembers(JSON.parse('{"input":[{"__proto__":{}}]}')), 'input[0].__proto__');
  refused(() => refuseProtoMembers(JSON.parse('{"__proto__":{}}'), 'function.arguments'), 'function.arguments.__proto__');
  assert.doesNotThrow(() => refuseProtoMembers({ a: [{ constructor: 1 }] }));
});

test('copies define fields: a __proto__ member never becomes the prototype of the copy', () => {
  // What reached dropNulls before the rule: its copy by assignment made the member the prototype.
  const copy = dropNulls(JSON.parse('{"model":"m","temperature":null,"__proto__":{"max_tokens":1}}')) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.equal(copy.max_tokens, undefined, 'no field is inherited');
  assert.ok(Object.hasOwn(copy, '__proto__'));
  assert.equal(Object.hasOwn(copy, 'temperature'), false);
  const out: Record<string, unknown> = {};
  setOwn(out, '__proto__', { x: 1 });
  setOwn(out, 'constructor', 2);
  assert.equal((out as { x?: number }).x, undefined);
  assert.deepEqual(JSON.parse(JSON.stringify(out)), { ['__proto__']: { x: 1 }, constructor: 2 });
});

test('a multipart form: a __proto__ field is refused, stream must be true or false as an own word', () => {
  const file: FormFile = { name: 'file', filename: 'a.mp3', contentType: 'audio/mpeg', data: Buffer.from([1, 2, 3]) };
  const model = { name: 'model', value: 'openai/whisper-1' };
  assert.throws(
    () => parseForm([model, file, { name: '__proto__', value: 'x' }], FORM_SPECS.transcription),
    (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === '__proto__',
  );
  assert.throws(
    () => parseForm([model, file, { name: 'stream', value: 'constructor' }], FORM_SPECS.transcription),
    (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'stream',
  );
});

test('a custom resource with a __proto__ member is refused naming it; the other resources still render', () => {
  // As the Kubernetes API delivers it: JSON text, so the member is an own field of the spec.
  const bad = JSON.parse(
    JSON.stringify(cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('openai-creds', 'api-key'), weight: 1 }], network_config: { extra_headers: { x: 'y' } } })).replace(
      '"x":"y"',
      '"__proto__":"hidden","x":"y"',
    ),
  ) as CustomResource;
  const others = sampleResources().filter((r) => !(r.kind === 'Provider' && r.metadata.name === 'openai'));
  const d = desiredState([...others, bad], sampleSecrets());
  const v = d.verdicts.get('Provider default/openai');
  // A copy by assignment would have dropped the member without a word and accepted the rest.
  assert.equal(v?.accepted, false);
  assert.equal(v?.reason, 'InvalidSpec');
  assert.match(v?.message ?? '', /spec\.network_config\.extra_headers\.__proto__: '__proto__' is not allowed as a field name/);
  assert.deepEqual(Object.keys((d.input.document.providers ?? {}) as object), ['anthropic']);
});
