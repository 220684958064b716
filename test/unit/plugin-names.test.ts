// The registry of plugin stages (plugins.ts) and the list of built plugin names the config check
// reads (schema/plugins.ts) must agree: a name only in the list would be accepted and never run; a
// stage only in the registry would be warned about as "not built" while it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PLUGINS } from '../../proxy/src/plugins.ts';
import { BUILT_PLUGINS } from '../../proxy/src/schema/plugins.ts';

test('the plugin registry and the built plugin names list the same plugins, in the same order', () => {
  assert.deepEqual([...PLUGINS.keys()], [...BUILT_PLUGINS]);
});
