import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RoutingRule } from '../../proxy/src/schema/governance.ts';
import { compileRules, parseFallbackString, validateRuleForWrite } from '../../proxy/src/routing/rules.ts';
import { compile, rule } from './routing-helpers.ts';

test('compileRules keeps enabled rules only (enabled defaults to true), grouped by scope', () => {
  const compiled = compile([
    rule('off', '', 'openai/a', { enabled: false }),
    rule('on', '', 'openai/b', { enabled: true }),
    rule('default-on', '', 'openai/c'),
    rule('vk', '', 'openai/d', { scope: 'virtual_key', scope_id: 'vk-1' }),
    rule('team', '', 'openai/e', { scope: 'team', scope_id: 't-1' }),
    rule('customer', '', 'openai/f', { scope: 'customer', scope_id: 'c-1' }),
    rule('global-explicit', '', 'openai/g', { scope: 'global', scope_id: null }),
  ]);
  assert.equal(compiled.size, 6);
  assert.deepEqual(compiled.global.map((r) => r.name), ['default-on', 'global-explicit', 'on']);
  assert.deepEqual(compiled.virtual_key.get('vk-1')?.map((r) => r.name), ['vk']);
  assert.deepEqual(compiled.team.get('t-1')?.map((r) => r.name), ['team']);
  assert.deepEqual(compiled.customer.get('c-1')?.map((r) => r.name), ['customer']);
  assert.equal(compiled.global[0].scopeId, null);
  assert.equal(compiled.usesComplexityTier, false);
  assert.equal(compile([rule('tier', 'complexity_tier == "SIMPLE"', 'openai/x')]).usesComplexityTier, true);
});

test('rules sort by ascending priority (default 0), ties by name, stably', () => {
  const compiled = compile([
    rule('b', '', 'openai/x', { priority: 5 }),
    rule('z', '', 'openai/x', { priority: -1 }),
    rule('a', '', 'openai/x', { priority: 5 }),
    rule('m', '', 'openai/x'),
    rule('c', '', 'openai/x', { priority: 2.5 }),
  ]);
  assert.deepEqual(compiled.global.map((r) => r.name), ['z', 'm', 'c', 'a', 'b']);
});

test('CEL rule 4: a rule with invalid CEL is skipped with a warning naming it; the others compile', () => {
  const warnings: string[] = [];
  const compiled = compile([rule('broken', 'model ==', 'openai/x'), rule('fine', 'model == "a"', 'openai/y')], warnings);
  assert.deepEqual(compiled.global.map((r) => r.name), ['fine']);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^routing rule "broken" skipped: Failed to compile rule: invalid CEL syntax: Unexpected token: EOF/);
});

test('a rule that breaks the write-time rules is skipped with a warning (config.json path)', () => {
  const warnings: string[] = [];
  const compiled = compile(
    [
      { name: 'weights', targets: [{ provider: 'openai', weight: 0.5 }, { provider: 'anthropic', weight: 0.4 }] },
      { name: 'pin', targets: [{ key_id: 'k', weight: 1 }] },
      { name: 'team-no-id', scope: 'team', targets: [{ weight: 1 }] },
    ],
    warnings,
  );
  assert.equal(compiled.size, 0);
  assert.equal(warnings.length, 3);
  assert.match(warnings[0], /"weights" skipped: targets weights must sum to 1/);
  assert.match(warnings[1], /"pin" skipped: targets\[0\]\.key_id requires provider/);
  assert.match(warnings[2], /"team-no-id" skipped: scope_id is required for scope team/);
});

test('targets carry cumulative weights; chain_rule defaults to false', () => {
  const [r] = compile([
    {
      name: 'split',
      targets: [
        { provider: 'openai', model: 'a', weight: 0.25 },
        { provider: 'anthropic', key_id: 'k1', weight: 0.75 },
      ],
    },
  ]).global;
  assert.deepEqual(r.targets.map((t) => t.cumulative), [0.25, 1]);
  assert.equal(r.totalWeight, 1);
  assert.equal(r.targets[1].keyId, 'k1');
  assert.equal(r.targets[1].model, undefined);
  assert.equal(r.chain, false);
});

test('fallbacks: strings split at the first slash, objects keep their pins', () => {
  assert.deepEqual(parseFallbackString('openai/gpt-4o'), { provider: 'openai', model: 'gpt-4o' });
  assert.deepEqual(parseFallbackString('anthropic/'), { provider: 'anthropic', model: undefined });
  assert.deepEqual(parseFallbackString('openrouter/meta-llama/llama-3.1-8b'), { provider: 'openrouter', model: 'meta-llama/llama-3.1-8b' });
  const [r] = compile([
    rule('f', '', 'openai/x', {
      fallbacks: ['anthropic/claude-sonnet-4-5', { provider: 'openai', key_id: 'key-2' }, { provider: 'gemini', model: 'gemini-2.5-flash' }],
    }),
  ]).global;
  assert.deepEqual(r.fallbacks, [
    { provider: 'anthropic', model: 'claude-sonnet-4-5' },
    { provider: 'openai', model: undefined, keyId: 'key-2' },
    { provider: 'gemini', model: 'gemini-2.5-flash', keyId: undefined },
  ]);
});

test('provider_key_name resolves to a key id; an unknown name drops that fallback with a warning', () => {
  const warnings: string[] = [];
  const keys: Record<string, string> = { 'openai/primary': 'id-primary' };
  const compiled = compileRules(
    [
      rule('f', '', 'openai/x', {
        fallbacks: [
          { provider: 'openai', model: 'gpt-4o-mini', provider_key_name: 'primary' },
          { provider: 'openai', provider_key_name: 'gone' },
          'anthropic/',
        ],
      }),
    ],
    { warn: (m) => warnings.push(m), resolveKeyName: (p, n) => keys[`${p}/${n}`] },
  );
  assert.deepEqual(compiled.global[0].fallbacks, [
    { provider: 'openai', model: 'gpt-4o-mini', keyId: 'id-primary' },
    { provider: 'anthropic', model: undefined },
  ]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /routing rule "f": fallbacks\[1\] skipped: provider openai has no key named "gone"/);
});

test('a duplicate name within one scope is warned about, not dropped', () => {
  const warnings: string[] = [];
  const compiled = compile([rule('same', '', 'openai/a'), rule('same', '', 'openai/b'), rule('same', '', 'openai/c', { scope: 'team', scope_id: 't' })], warnings);
  assert.equal(compiled.size, 3);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /"same": name is not unique in scope global/);
});

const valid: RoutingRule = {
  name: 'premium-to-claude',
  cel_expression: 'headers["x-tier"] == "premium"',
  targets: [
    { provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 0.7 },
    { provider: 'openai', key_id: 'k-1', weight: 0.3 },
  ],
  fallbacks: ['openai/gpt-4o'],
  scope: 'team',
  scope_id: 'team-1',
  priority: 1,
};

test('validateRuleForWrite accepts a valid rule, weights within 1e-6 of 1', () => {
  assert.deepEqual(validateRuleForWrite(valid), []);
  assert.deepEqual(validateRuleForWrite({ name: 'g', targets: [{ weight: 1 }] }), []);
  const thirds = [0.3333333, 0.3333333, 0.3333334].map((weight) => ({ provider: 'openai', weight }));
  assert.deepEqual(validateRuleForWrite({ name: 't', targets: thirds }), []);
  const nearly = [0.3333333, 0.3333333, 0.3333333].map((weight) => ({ provider: 'openai', weight }));
  assert.deepEqual(validateRuleForWrite({ name: 't', targets: nearly }), []); // off by 1e-7
});

test('validateRuleForWrite: weights that do not sum to 1', () => {
  const errors = validateRuleForWrite({ ...valid, targets: [{ provider: 'openai', weight: 0.5 }, { provider: 'anthropic', weight: 0.4 }] });
  assert.deepEqual(errors, [{ path: 'targets', message: 'weights must sum to 1 (they sum to 0.9)' }]);
  const off = validateRuleForWrite({ ...valid, targets: [0.333, 0.333, 0.333].map((weight) => ({ provider: 'openai', weight })) });
  assert.equal(off.length, 1);
  assert.equal(off[0].path, 'targets');
});

test('validateRuleForWrite: scope_id required unless global, and null for global', () => {
  assert.deepEqual(validateRuleForWrite({ ...valid, scope_id: undefined }), [{ path: 'scope_id', message: 'is required for scope team' }]);
  assert.deepEqual(validateRuleForWrite({ ...valid, scope_id: null }), [{ path: 'scope_id', message: 'is required for scope team' }]);
  assert.deepEqual(validateRuleForWrite({ ...valid, scope: 'global' }), [{ path: 'scope_id', message: 'must be null for global scope' }]);
  assert.deepEqual(validateRuleForWrite({ ...valid, scope: 'global', scope_id: null }), []);
  assert.deepEqual(validateRuleForWrite({ ...valid, scope: undefined, scope_id: undefined }), []);
});

test('validateRuleForWrite: key_id requires provider', () => {
  const errors = validateRuleForWrite({ ...valid, targets: [{ model: 'gpt-4o', key_id: 'k', weight: 1 }] });
  assert.deepEqual(errors, [{ path: 'targets[0].key_id', message: 'requires provider' }]);
});

test('validateRuleForWrite: CEL that does not compile, with the spec message and the detail', () => {
  const errors = validateRuleForWrite({ ...valid, cel_expression: 'headers["x-tier" == "premium"' });
  assert.equal(errors.length, 1);
  assert.equal(errors[0].path, 'cel_expression');
  assert.ok(errors[0].message.startsWith('Failed to compile rule: invalid CEL syntax: '), errors[0].message);
  const typed = validateRuleForWrite({ ...valid, cel_expression: 'budget_used > "80"' });
  // A type mismatch parses: it is named a type error, not a syntax error.
  assert.match(typed[0].message, /^Failed to compile rule: CEL type check failed: no such overload: double > string/);
  const unknown = validateRuleForWrite({ ...valid, cel_expression: 'tier == "gold"' });
  assert.match(unknown[0].message, /^Failed to compile rule: CEL type check failed: /);
});

test('validateRuleForWrite: schema errors come with their paths, and bad CEL is still reported', () => {
  const errors = validateRuleForWrite({ name: '', targets: [], cel_expression: 'model ==', extra: 1 });
  const paths = errors.map((e) => e.path);
  assert.ok(paths.includes('name'), JSON.stringify(errors));
  assert.ok(paths.includes('targets'), JSON.stringify(errors));
  assert.ok(paths.includes('extra'), JSON.stringify(errors));
  assert.ok(errors.some((e) => e.path === 'cel_expression' && e.message.startsWith('Failed to compile rule: invalid CEL syntax')));
  assert.ok(validateRuleForWrite({ name: 'x', targets: [{ weight: 1.5 }] }).some((e) => e.path === 'targets[0].weight'));
  assert.ok(validateRuleForWrite({ name: 'x', targets: [{ weight: 1 }], fallbacks: ['no-slash'] }).some((e) => e.path === 'fallbacks[0]'));
});

test('validateRuleForWrite: a name must be unique within its scope', () => {
  const existing: RoutingRule[] = [{ ...valid, id: 'r-1' }];
  assert.deepEqual(validateRuleForWrite({ ...valid }, { existing }), [
    { path: 'name', message: 'is already used by another rule in scope team team-1' },
  ]);
  assert.deepEqual(validateRuleForWrite({ ...valid, id: 'r-1' }, { existing }), []); // the same rule, updated
  assert.deepEqual(validateRuleForWrite({ ...valid, scope_id: 'team-2' }, { existing }), []);
});
