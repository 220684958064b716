// The hold rule: a render that would empty most of what the proxies serve, while the custom
// resources it came from still exist, is not written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdDecision } from '../../operator/src/safety.ts';
import { eventName } from '../../operator/src/events.ts';

const live = {
  managed: { providers: ['anthropic', 'openai'], virtual_keys: ['checkout', 'search'] },
  sources: {
    'providers/openai': 'Provider skybridge/openai',
    'providers/anthropic': 'Provider skybridge/anthropic',
    'virtual_keys/checkout': 'VirtualKey skybridge/checkout',
    'virtual_keys/search': 'VirtualKey skybridge/search',
  },
};
const all = () => true;

test('a render that removes every provider while their CRs exist (a deleted Secret) is held', () => {
  const d = holdDecision(live, { managed: {} }, all);
  assert.match(d.reason ?? '', /would remove every provider \(2 served\)/);
  assert.deepEqual(d.lost.sort(), ['providers/anthropic', 'providers/openai', 'virtual_keys/checkout', 'virtual_keys/search']);
});

test('more than half of the served providers and virtual keys at once is held; half or less is not', () => {
  const most = holdDecision(live, { managed: { providers: ['openai'] } }, all);
  assert.match(most.reason ?? '', /remove 3 of the 4 served/);
  const half = holdDecision(live, { managed: { providers: ['openai'], virtual_keys: ['checkout'] } }, all);
  assert.equal(half.reason, undefined);
  assert.deepEqual(half.lost.sort(), ['providers/anthropic', 'virtual_keys/search']);
});

test('deleting the custom resources is intent: never held', () => {
  const d = holdDecision(live, { managed: {} }, () => false);
  assert.equal(d.reason, undefined);
  assert.deepEqual(d.lost, []);
});

test('deleting the last Provider is intent even while VirtualKeys name it: the keys refused for it go too', () => {
  const one = { managed: { providers: ['openai'], virtual_keys: ['checkout', 'search'] }, sources: { ...live.sources } };
  const deleted = (source: string) => source !== 'Provider skybridge/openai';
  const refused = (source: string) => (source.startsWith('VirtualKey') ? 'ReferenceNotFound' : undefined);
  const d = holdDecision(one, { managed: {} }, deleted, refused);
  assert.equal(d.reason, undefined);
  assert.deepEqual(d.lost, []);
  // A key refused for something else (an emptied Secret of its own) still counts.
  const d2 = holdDecision(one, { managed: {} }, deleted, (source) => (source.endsWith('checkout') ? 'SecretNotFound' : refused(source)));
  assert.deepEqual(d2.lost, ['virtual_keys/checkout']);
  // A provider lost by accident in the same change keeps every key counted: held as before.
  const d3 = holdDecision(live, { managed: {} }, (source) => source !== 'Provider skybridge/anthropic', refused);
  assert.match(d3.reason ?? '', /would remove every provider/);
  assert.deepEqual(d3.lost.sort(), ['providers/openai', 'virtual_keys/checkout', 'virtual_keys/search']);
});

test('the first render (nothing served yet) is never held', () => {
  assert.equal(holdDecision(undefined, { managed: {} }, all).reason, undefined);
});

test('an Event name is the same for the same problem of the same object, and differs per reason and note', () => {
  const t = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'skybridge-config-index' };
  assert.equal(eventName(t, 'RenderHeld', 'n'), eventName({ ...t }, 'RenderHeld', 'n'));
  assert.notEqual(eventName(t, 'RenderHeld', 'n'), eventName(t, 'RenderFailed', 'n'));
  assert.notEqual(eventName(t, 'RenderHeld', 'n'), eventName(t, 'RenderHeld', 'm'));
  assert.match(eventName(t, 'RenderHeld', 'n'), /^skybridge-config-index\.[0-9a-f]{16}$/);
  assert.ok(eventName({ ...t, name: 'x'.repeat(253) }, 'R', 'n').length <= 253);
});
