// The registry of plugin stages (plugins.ts) and the list of built plugin names the config check
// reads (schema/plugins.ts) must agree: a name only in the list would be accepted and never run; a
// stage only in the registry would be warned about as "not built" while it runs. The one exception
// is a plugin run as a builtin (otel: tracing wraps every stage, so it is not a stage among them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PLUGINS } from '../../proxy/src/plugins.ts';
import { BUILT_PLUGINS, BUILTIN_RUN_PLUGINS } from '../../proxy/src/schema/plugins.ts';
import { BUILTINS } from '../../proxy/src/builtin-stages.ts';

test('the plugin registry and the built plugin names list the same plugins, in the same order', () => {
  assert.deepEqual([...PLUGINS.keys()], [...BUILT_PLUGINS].filter((n) => !BUILTIN_RUN_PLUGINS.has(n)));
});

test('every built plugin outside the registry is run by a builtin entry that names it', () => {
  for (const name of BUILTIN_RUN_PLUGINS) {
    assert.ok(BUILT_PLUGINS.has(name), name);
    assert.ok(!PLUGINS.has(name), name);
    assert.ok(BUILTINS.some((b) => b.plugin === name), `no builtin entry runs plugin '${name}'`);
  }
});
