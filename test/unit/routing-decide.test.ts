import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RoutingRule } from '../../proxy/src/schema/governance.ts';
import { decide, pickTarget, type Capacity } from '../../proxy/src/routing/decide.ts';
import { EMPTY_RULES } from '../../proxy/src/routing/rules.ts';
import { compile, ctx, deps, rule, seeded, sequence } from './routing-helpers.ts';

const vk = { id: 'vk-1', name: 'prod-key' };
const team = { id: 't-1', name: 'ml' };
const customer = { id: 'c-1', name: 'acme' };

// --- The "Routing decision" table, row by row ---

test('table row: no rule matches -> incoming provider/model unchanged, not matched', () => {
  const rules = compile([rule('claude', 'model.startsWith("claude")', 'anthropic/claude-sonnet-4-5')]);
  const d = decide(rules, ctx(), deps());
  assert.equal(d.matched, false);
  assert.equal(d.provider, 'openai');
  assert.equal(d.model, 'gpt-4o');
  assert.equal(d.keyId, undefined);
  assert.deepEqual(d.fallbacks, []);
  assert.equal(d.error, undefined);
  assert.equal(d.trail.length, 1);
  assert.equal(d.trail[0].matched, false);
  // No rules at all: the same answer.
  assert.deepEqual(decide(EMPTY_RULES, ctx({ provider: '' }), deps()), { matched: false, provider: '', model: 'gpt-4o', fallbacks: [], trail: [] });
});

test('table row: a match with chain_rule false is final', () => {
  const rules = compile([
    rule('to-mini', 'model == "gpt-4o"', 'openai/gpt-4o-mini', { priority: 1 }),
    // Would match the resolved model, but the first match was terminal.
    rule('mini-to-claude', 'model == "gpt-4o-mini"', 'anthropic/claude-haiku-4-5', { priority: 2 }),
  ]);
  const d = decide(rules, ctx(), deps());
  assert.equal(d.matched, true);
  assert.equal(d.provider, 'openai');
  assert.equal(d.model, 'gpt-4o-mini');
  assert.equal(d.ruleName, 'to-mini');
  assert.deepEqual(
    d.trail.map((s) => [s.step, s.ruleName, s.matched]),
    [[0, 'to-mini', true]],
  );
});

test('table row: a match with chain_rule true re-evaluates the full scope chain from the top with the resolved provider/model', () => {
  const rules = compile([
    rule('vk-claude-to-bedrock', 'provider == "anthropic"', 'bedrock/claude-sonnet-4-5', { scope: 'virtual_key', scope_id: 'vk-1' }),
    rule('global-gpt-to-claude', 'model == "gpt-4o"', 'anthropic/claude-sonnet-4-5', { chain_rule: true }),
  ]);
  const d = decide(rules, ctx({ virtualKey: vk }), deps());
  assert.equal(d.provider, 'bedrock');
  assert.equal(d.model, 'claude-sonnet-4-5');
  assert.equal(d.ruleName, 'vk-claude-to-bedrock');
  assert.deepEqual(
    d.trail.map((s) => [s.step, s.scope, s.ruleName, s.matched]),
    [
      [0, 'virtual_key', 'vk-claude-to-bedrock', false],
      [0, 'global', 'global-gpt-to-claude', true],
      [1, 'virtual_key', 'vk-claude-to-bedrock', true], // from the top: the VK scope first again
    ],
  );
});

test('table row: provider and model unchanged after a chain step -> the chain stops (convergence)', () => {
  const rules = compile([
    rule('to-claude', 'model == "gpt-4o"', 'anthropic/claude-sonnet-4-5', { chain_rule: true, priority: 1 }),
    // Matches the resolved state and keeps it: converged, no error, no further steps.
    { name: 'claude-stays', cel_expression: 'provider == "anthropic"', chain_rule: true, priority: 2, targets: [{ weight: 1 }] },
  ]);
  let capacityCalls = 0;
  const d = decide(rules, ctx(), deps({ capacity: () => (capacityCalls++, { budget_used: 0, tokens_used: 0, request: 0 }) }));
  assert.equal(d.error, undefined);
  assert.equal(d.provider, 'anthropic');
  assert.equal(d.model, 'claude-sonnet-4-5');
  assert.equal(d.ruleName, 'claude-stays');
  assert.equal(capacityCalls, 2);
  assert.deepEqual(
    d.trail.filter((s) => s.matched).map((s) => [s.step, s.ruleName]),
    [
      [0, 'to-claude'],
      [1, 'claude-stays'],
    ],
  );
});

test('a chain stops when no rule matches the resolved state', () => {
  const rules = compile([rule('a-to-b', 'model == "a"', 'openai/b', { chain_rule: true })]);
  const d = decide(rules, ctx({ model: 'a' }), deps());
  assert.equal(d.model, 'b');
  assert.equal(d.error, undefined);
  assert.deepEqual(
    d.trail.map((s) => [s.step, s.matched]),
    [
      [0, true],
      [1, false],
    ],
  );
});

// --- Numbered rules under "Routing decision" ---

test('rule 1: scope chain is virtual key, team, customer, global', () => {
  const everywhere = (scope: RoutingRule['scope'], scope_id: string | null): RoutingRule =>
    rule(`${scope}-rule`, '', `${scope}/m`, { scope, scope_id, chain_rule: false });
  const all = [everywhere('global', null), everywhere('customer', 'c-1'), everywhere('team', 't-1'), everywhere('virtual_key', 'vk-1')];
  const full = ctx({ virtualKey: vk, team, customer });
  assert.equal(decide(compile(all), full, deps()).provider, 'virtual_key');
  assert.equal(decide(compile(all.slice(0, 3)), full, deps()).provider, 'team');
  assert.equal(decide(compile(all.slice(0, 2)), full, deps()).provider, 'customer');
  assert.equal(decide(compile(all.slice(0, 1)), full, deps()).provider, 'global');
  // Rules of another virtual key, team or customer never apply.
  assert.equal(decide(compile(all), ctx({ virtualKey: { id: 'vk-2', name: 'x' }, team: { id: 't-2', name: 'y' } }), deps()).provider, 'global');
});

test('rule 1: without a virtual key only global rules apply', () => {
  const rules = compile([
    rule('team', '', 'team/m', { scope: 'team', scope_id: 't-1' }),
    rule('customer', '', 'customer/m', { scope: 'customer', scope_id: 'c-1' }),
    rule('global', 'team_id == "" && customer_id == "" && virtual_key_id == ""', 'global/m'),
  ]);
  const d = decide(rules, ctx({ team, customer }), deps());
  assert.equal(d.provider, 'global');
  assert.deepEqual(d.trail.map((s) => s.scope), ['global']);
});

test('rule 2: narrowest scope first; inside a scope ascending priority; the first match wins', () => {
  const rules = compile([
    rule('global-first', '', 'g/m', { priority: -100 }),
    rule('team-late', '', 'team-late/m', { scope: 'team', scope_id: 't-1', priority: 10 }),
    rule('team-early-nomatch', 'model == "other"', 'x/m', { scope: 'team', scope_id: 't-1', priority: 1 }),
    rule('team-mid', 'model == "gpt-4o"', 'team-mid/m', { scope: 'team', scope_id: 't-1', priority: 5 }),
    rule('team-disabled', '', 'off/m', { scope: 'team', scope_id: 't-1', priority: 2, enabled: false }),
  ]);
  const d = decide(rules, ctx({ virtualKey: vk, team }), deps());
  assert.equal(d.provider, 'team-mid');
  assert.deepEqual(
    d.trail.map((s) => [s.ruleName, s.matched]),
    [
      ['team-early-nomatch', false],
      ['team-mid', true],
    ],
  );
});

test('rule 3: a rule with an empty expression always matches', () => {
  const d = decide(compile([{ name: 'catch-all', targets: [{ provider: 'anthropic', weight: 1 }] }]), ctx(), deps());
  assert.equal(d.matched, true);
  assert.equal(d.provider, 'anthropic');
  assert.equal(d.model, 'gpt-4o'); // omitted target model keeps the incoming one
  assert.equal(d.trail[0].expression, '');
});

test('rule 4: one target at random by weight (seeded random)', () => {
  const rules = compile([
    {
      name: 'split',
      targets: [
        { provider: 'openai', model: 'gpt-4o-mini', weight: 0.2 },
        { provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 0.5 },
        { provider: 'gemini', model: 'gemini-2.5-flash', weight: 0.3 },
      ],
    },
  ]);
  // Boundaries: [0, 0.2) first, [0.2, 0.7) second, [0.7, 1) third.
  const pick = (r: number): string => decide(rules, ctx(), deps({ random: sequence(r) })).provider;
  assert.equal(pick(0), 'openai');
  assert.equal(pick(0.1999), 'openai');
  assert.equal(pick(0.2), 'anthropic');
  assert.equal(pick(0.6999), 'anthropic');
  assert.equal(pick(0.7), 'gemini');
  assert.equal(pick(0.999999), 'gemini');

  const random = seeded(42);
  const counts: Record<string, number> = { openai: 0, anthropic: 0, gemini: 0 };
  const n = 20_000;
  for (let i = 0; i < n; i++) counts[decide(rules, ctx(), deps({ random })).provider]++;
  assert.ok(Math.abs(counts.openai / n - 0.2) < 0.015, JSON.stringify(counts));
  assert.ok(Math.abs(counts.anthropic / n - 0.5) < 0.015, JSON.stringify(counts));
  assert.ok(Math.abs(counts.gemini / n - 0.3) < 0.015, JSON.stringify(counts));
});

test('rule 4: a single target needs no random draw', () => {
  const [r] = compile([rule('one', '', 'openai/x')]).global;
  assert.equal(pickTarget(r, sequence()).provider, 'openai'); // sequence() throws if called
});

test('rule 4: provider, model, key and fallbacks come from the chosen target and rule; omitted ones keep the incoming values', () => {
  const rules = compile([
    {
      name: 'pin',
      targets: [{ provider: 'openai', key_id: 'key-eu', weight: 1 }],
      fallbacks: ['anthropic/claude-haiku-4-5', 'gemini/'],
    },
  ]);
  const d = decide(rules, ctx({ model: 'gpt-4.1' }), deps());
  assert.equal(d.provider, 'openai');
  assert.equal(d.model, 'gpt-4.1');
  assert.equal(d.keyId, 'key-eu');
  assert.deepEqual(d.fallbacks, [
    { provider: 'anthropic', model: 'claude-haiku-4-5' },
    { provider: 'gemini', model: 'gpt-4.1' },
  ]);
  assert.deepEqual(d.trail[0].target, { provider: 'openai', model: 'gpt-4.1', keyId: 'key-eu' });
});

test('rule 4: in a chain the last matched rule wins for every field (an unpinned later target clears the key)', () => {
  const rules = compile([
    {
      name: 'first',
      cel_expression: 'model == "gpt-4o"',
      chain_rule: true,
      priority: 1,
      targets: [{ provider: 'openai', model: 'gpt-4.1', key_id: 'k-1', weight: 1 }],
      fallbacks: ['anthropic/claude-sonnet-4-5'],
    },
    { name: 'second', cel_expression: 'model == "gpt-4.1"', priority: 2, targets: [{ model: 'gpt-4.1-mini', weight: 1 }] },
  ]);
  const d = decide(rules, ctx(), deps());
  assert.equal(d.provider, 'openai');
  assert.equal(d.model, 'gpt-4.1-mini');
  assert.equal(d.keyId, undefined);
  assert.equal('keyId' in d, false);
  assert.deepEqual(d.fallbacks, []);
  assert.equal(d.ruleName, 'second');
});

test('rule 4: a bare model (provider "") keeps provider "" when the target names none', () => {
  const d = decide(compile([rule('m', 'provider == ""', '/gpt-4o-mini')]), ctx({ provider: '' }), deps());
  assert.equal(d.matched, true);
  assert.equal(d.provider, '');
  assert.equal(d.model, 'gpt-4o-mini');
});

test('rule 6: fallbacks are pinned independently: object pins keep their key with their provider, others load-balance', () => {
  const rules = compile([
    {
      name: 'f',
      targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', key_id: 'anthropic-key', weight: 1 }],
      fallbacks: [
        { provider: 'openai', model: 'gpt-4o', key_id: 'openai-key' },
        { provider: 'openai' },
        'gemini/gemini-2.5-flash',
        { provider: 'anthropic', model: 'claude-haiku-4-5' },
      ],
    },
  ]);
  const d = decide(rules, ctx({ model: 'claude-opus-4-1', provider: 'anthropic' }), deps());
  assert.equal(d.keyId, 'anthropic-key');
  assert.deepEqual(d.fallbacks, [
    { provider: 'openai', model: 'gpt-4o', keyId: 'openai-key' },
    { provider: 'openai', model: 'claude-opus-4-1' }, // object without model keeps the incoming model
    { provider: 'gemini', model: 'gemini-2.5-flash' },
    { provider: 'anthropic', model: 'claude-haiku-4-5' },
  ]);
});

test('rule 7: every chain step is in the audit trail with scope, rule, expression, result and target', () => {
  const rules = compile([
    { id: 'r-vk', name: 'vk-miss', cel_expression: 'headers["x-tier"] == "free"', scope: 'virtual_key', scope_id: 'vk-1', targets: [{ provider: 'x', weight: 1 }] },
    { id: 'r-1', name: 'to-claude', cel_expression: 'model == "gpt-4o"', chain_rule: true, targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }] },
  ]);
  const d = decide(rules, ctx({ virtualKey: vk, headers: { 'x-tier': 'premium' } }), deps());
  assert.deepEqual(d.trail, [
    { step: 0, scope: 'virtual_key', scopeId: 'vk-1', ruleId: 'r-vk', ruleName: 'vk-miss', expression: 'headers["x-tier"] == "free"', matched: false },
    {
      step: 0,
      scope: 'global',
      scopeId: null,
      ruleId: 'r-1',
      ruleName: 'to-claude',
      expression: 'model == "gpt-4o"',
      matched: true,
      target: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      chain: true,
    },
    { step: 1, scope: 'virtual_key', scopeId: 'vk-1', ruleId: 'r-vk', ruleName: 'vk-miss', expression: 'headers["x-tier"] == "free"', matched: false },
    { step: 1, scope: 'global', scopeId: null, ruleId: 'r-1', ruleName: 'to-claude', expression: 'model == "gpt-4o"', matched: false },
  ]);
  assert.equal(d.ruleId, 'r-1');
  assert.doesNotThrow(() => JSON.stringify(d));
});

// --- Chains that do not converge ---

test('a cycle (A -> B -> A) stops as soon as it closes, reports it, and keeps the last decision', () => {
  const rules = compile([
    rule('a-to-b', 'model == "a"', 'openai/b', { chain_rule: true }),
    rule('b-to-a', 'model == "b"', 'openai/a', { chain_rule: true }),
  ]);
  const d = decide(rules, ctx({ model: 'a' }), deps());
  assert.equal(d.matched, true);
  assert.equal(d.model, 'a');
  assert.equal(d.ruleName, 'b-to-a');
  assert.equal(d.error, 'routing rule chain cycle: openai/a -> openai/b -> openai/a');
  assert.equal(d.trail.filter((s) => s.matched).length, 2);
});

test('a chain that keeps moving stops at the step limit (default 10) with an error and the last decision', () => {
  // m0 -> m1 -> m2 -> ... never revisits a state.
  const many = compile(Array.from({ length: 30 }, (_, i) => rule(`m${i}`, `model == "m${i}"`, `openai/m${i + 1}`, { chain_rule: true })));
  const d = decide(many, ctx({ model: 'm0' }), deps());
  assert.equal(d.model, 'm10');
  assert.equal(d.ruleName, 'm9');
  assert.equal(d.error, 'routing rule chain did not converge within 10 steps (last: openai/m10)');
  assert.equal(d.trail.filter((s) => s.matched).length, 10);

  const short = decide(many, ctx({ model: 'm0' }), deps({ maxSteps: 3 }));
  assert.equal(short.model, 'm3');
  assert.match(short.error ?? '', /within 3 steps/);
});

// --- CEL variables ---

test('CEL variables: identity, request type, headers and params reach the expression', () => {
  const rules = compile([
    rule(
      'all',
      'virtual_key_id == "vk-1" && virtual_key_name == "prod-key" && team_id == "t-1" && team_name == "ml" && customer_id == "c-1" && customer_name == "acme" && request_type == "embedding" && params["region"] == "eu" && headers["X-Tier"] == "premium"',
      'openai/text-embedding-3-large',
    ),
  ]);
  const d = decide(
    rules,
    ctx({ virtualKey: vk, team, customer, requestType: 'embedding', params: { region: 'eu' }, headers: { 'x-tier': 'premium' } }),
    deps(),
  );
  assert.equal(d.matched, true);
});

test('CEL rule 2: capacity variables are read for the current provider/model at every chain step', () => {
  const seen: string[] = [];
  const capacity = (provider: string, model: string): Capacity => {
    seen.push(`${provider}/${model}`);
    return provider === 'anthropic' ? { budget_used: 97.5, tokens_used: 10, request: 50 } : { budget_used: 12, tokens_used: 0, request: 0 };
  };
  const rules = compile([
    rule('exhausted-anthropic', 'provider == "anthropic" && budget_used > 95', 'openai/gpt-4o-mini', { priority: 1 }),
    rule('tokens', 'tokens_used >= 10 && request >= 50', 'never/x', { priority: 2 }),
    rule('to-anthropic', 'model == "gpt-4o" && budget_used < 50', 'anthropic/claude-sonnet-4-5', { chain_rule: true, priority: 3 }),
  ]);
  const d = decide(rules, ctx(), deps({ capacity }));
  assert.deepEqual(seen, ['openai/gpt-4o', 'anthropic/claude-sonnet-4-5']);
  assert.equal(d.provider, 'openai');
  assert.equal(d.model, 'gpt-4o-mini');
  assert.equal(d.ruleName, 'exhausted-anthropic');
});

test('CEL rule 3: with complexity_tier unknown a rule using it does not match and evaluation falls through', () => {
  const rules = compile([
    rule('simple-to-mini', 'complexity_tier == "SIMPLE"', 'openai/gpt-4o-mini', { priority: 1 }),
    rule('not-simple', 'complexity_tier != "SIMPLE"', 'anthropic/claude-opus-4-1', { priority: 2 }),
    rule('default', '', 'openai/gpt-4o', { priority: 3 }),
  ]);
  const unknown = decide(rules, ctx(), deps());
  assert.equal(unknown.ruleName, 'default');
  assert.deepEqual(
    unknown.trail.map((s) => [s.ruleName, s.matched, s.skipped]),
    [
      ['simple-to-mini', false, 'complexity_tier_unknown'],
      ['not-simple', false, 'complexity_tier_unknown'],
      ['default', true, undefined],
    ],
  );
  assert.equal(decide(rules, ctx({ complexityTier: 'SIMPLE' }), deps()).ruleName, 'simple-to-mini');
  assert.equal(decide(rules, ctx({ complexityTier: 'COMPLEX' }), deps()).ruleName, 'not-simple');
});

test('CEL rule 4: a missing header or parameter is false and the next rule is tried', () => {
  const rules = compile([
    rule('tier', 'headers["x-tier"] == "premium"', 'anthropic/claude-sonnet-4-5', { priority: 1 }),
    rule('param', 'params["fast"] == "1"', 'groq/llama-3.3-70b', { priority: 2 }),
    rule('negated', 'headers["x-tier"] != "free"', 'never/x', { priority: 3 }),
    rule('fallthrough', '', 'openai/gpt-4o-mini', { priority: 4 }),
  ]);
  const d = decide(rules, ctx(), deps());
  assert.equal(d.ruleName, 'fallthrough');
  assert.equal(decide(rules, ctx({ headers: { 'x-tier': 'premium' } }), deps()).ruleName, 'tier');
  assert.equal(decide(rules, ctx({ params: { fast: '1' } }), deps()).ruleName, 'param');
});

test('CEL rule 4: a type mismatch at run time skips the rule with one warning, however many requests', () => {
  const warnings: string[] = [];
  const rules = compile(
    [
      rule('regex', 'model.matches(headers["x-pattern"])', 'never/x', { priority: 1 }),
      rule('next', '', 'openai/gpt-4o-mini', { priority: 2 }),
    ],
    warnings,
  );
  for (let i = 0; i < 5; i++) assert.equal(decide(rules, ctx({ headers: { 'x-pattern': '(' } }), deps()).ruleName, 'next');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^routing rule "regex" \[model\.matches\(headers\["x-pattern"\]\)\]: evaluation error: Invalid regular expression/);
});
