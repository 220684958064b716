import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validator, isFieldErrors } from '../../proxy/src/schema/validate.ts';
import { createComplexityClassifier, type EmbedFn } from '../../proxy/src/routing/complexity.ts';
import { ComplexityClassifierSchema, type ComplexityClassifierConfig } from '../../proxy/src/schema/complexity.ts';

// A fake embedding model: fixed, deterministic vectors over four "topics"
// (greeting, small fact, code, long-form reasoning). Unknown text embeds to a vector built
// from the topic words it contains, so similarity behaves like a (very small) real model.
const TOPICS: Array<[RegExp, number]> = [
  [/\b(hi|hello|thanks)\b/gi, 0],
  [/\b(time|capital|weather)\b/gi, 1],
  [/\b(function|bug|code|sql)\b/gi, 2],
  [/\b(design|prove|strategy|architecture)\b/gi, 3],
];
function vectorOf(text: string): number[] {
  const v = [0, 0, 0, 0, 0.05];
  for (const [re, dim] of TOPICS) v[dim] += text.match(re)?.length ?? 0;
  if (/zero/.test(text)) return [0, 0, 0, 0, 0];
  return v;
}

interface FakeEmbed {
  embed: EmbedFn;
  calls: string[][];
}
function fakeEmbed(opts: { fail?: boolean; gate?: Promise<void>; wrongCount?: boolean } = {}): FakeEmbed {
  const calls: string[][] = [];
  return {
    calls,
    embed: async (texts) => {
      calls.push(texts);
      if (opts.gate) await opts.gate;
      if (opts.fail) throw new Error('upstream 503');
      const out = texts.map(vectorOf);
      return opts.wrongCount ? out.slice(1) : out;
    },
  };
}

const cfg: ComplexityClassifierConfig = {
  provider: 'openai',
  model: 'text-embedding-3-small',
  examples: {
    SIMPLE: ['hello there', 'what time is it in Tokyo'],
    MEDIUM: ['fix this bug in my function', 'write a sql query for the top customers'],
    COMPLEX: ['design an architecture for a payment system', 'prove this strategy is optimal'],
  },
};

test('the examples are embedded once; classify is undefined until that is done', async () => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const fake = fakeEmbed({ gate });
  const c = createComplexityClassifier(cfg, fake.embed);
  assert.equal(c.ready, false);
  assert.equal(await c.classify('hello'), undefined);
  assert.equal(c.classifyVector([1, 0, 0, 0, 0]), undefined);
  open();
  assert.equal(await c.warmed, true);
  assert.equal(c.ready, true);
  // One batch of six examples (the classify above came before readiness: no embed call).
  assert.deepEqual(fake.calls, [[...cfg.examples.SIMPLE!, ...cfg.examples.MEDIUM!, ...cfg.examples.COMPLEX!]]);
  await c.classify('hi');
  await c.classify('thanks');
  assert.equal(fake.calls.length, 3);
  assert.deepEqual(fake.calls.slice(1), [['hi'], ['thanks']]);
});

test('the tier is the label of the nearest example, with its similarity and phrase', async () => {
  const c = createComplexityClassifier(cfg, fakeEmbed().embed);
  await c.warmed;
  const simple = await c.classify('hi, what is the capital of France?');
  assert.equal(simple?.tier, 'SIMPLE');
  const medium = await c.classify('there is a bug in this code');
  assert.equal(medium?.tier, 'MEDIUM');
  assert.equal(medium?.example, 'fix this bug in my function');
  const complex = await c.classify('Propose an architecture and design for the new platform');
  assert.equal(complex?.tier, 'COMPLEX');
  assert.equal(complex?.example, 'design an architecture for a payment system');
  assert.ok(complex && complex.similarity > 0.99 && complex.similarity <= 1 + 1e-12, String(complex?.similarity));
});

test('a tier whose examples cover unrelated topics still wins on each topic (nearest example, not centroid)', async () => {
  // SIMPLE has a greeting and a small fact: their centroid sits between the two topics, where it
  // is less like a greeting (cosine 0.71) than the COMPLEX example is (0.95). The nearest example
  // is still the SIMPLE greeting (1.0).
  const c = createComplexityClassifier(
    { ...cfg, examples: { SIMPLE: ['hello', 'what time is it'], COMPLEX: ['hello hi thanks, what time'] } },
    fakeEmbed().embed,
  );
  await c.warmed;
  assert.equal((await c.classify('thanks!'))?.tier, 'SIMPLE');
  assert.equal((await c.classify('the weather?'))?.tier, 'SIMPLE');
  assert.equal((await c.classify('hi hi hi, the time?'))?.tier, 'COMPLEX');
});

test('below the similarity floor the tier is unknown; the floor defaults to 0.5 and is configurable', async () => {
  const c = createComplexityClassifier(cfg, fakeEmbed().embed);
  await c.warmed;
  // Only the bias dimension in common with every example: cosine ~0.05.
  assert.equal(await c.classify('lorem ipsum dolor'), undefined);
  // Half greeting, half code: cosine ~0.7 to either, above 0.5.
  const mixed = c.classifyVector([1, 0, 1, 0, 0]);
  assert.ok(mixed !== undefined);
  assert.ok(mixed.similarity > 0.69 && mixed.similarity < 0.72, String(mixed.similarity));

  const strict = createComplexityClassifier({ ...cfg, similarity_floor: 0.9 }, fakeEmbed().embed);
  await strict.warmed;
  assert.equal(strict.classifyVector([1, 0, 1, 0, 0]), undefined);
  assert.equal(strict.classifyVector([1, 0, 0, 0, 0])?.tier, 'SIMPLE');
});

test('unsupported input is unknown: blank text (no embed call), a zero vector, a wrong dimension', async () => {
  const fake = fakeEmbed();
  const c = createComplexityClassifier(cfg, fake.embed);
  await c.warmed;
  assert.equal(await c.classify('   '), undefined);
  assert.equal(fake.calls.length, 1);
  assert.equal(await c.classify('zero'), undefined);
  assert.equal(c.classifyVector([1, 0, 0]), undefined);
});

test('a warm-up failure leaves the classifier not ready, reports the error, and settles warmed false', async () => {
  const errors: Error[] = [];
  const failing = createComplexityClassifier(cfg, fakeEmbed({ fail: true }).embed, { onError: (e) => errors.push(e) });
  assert.equal(await failing.warmed, false);
  assert.equal(failing.ready, false);
  assert.equal(await failing.classify('hello'), undefined);
  assert.match(errors[0].message, /upstream 503/);

  const short = createComplexityClassifier(cfg, fakeEmbed({ wrongCount: true }).embed, { onError: (e) => errors.push(e) });
  assert.equal(await short.warmed, false);
  assert.match(errors[1].message, /embedding 6 examples returned 5 vectors/);

  const empty = createComplexityClassifier({ ...cfg, examples: {} }, fakeEmbed().embed, { onError: (e) => errors.push(e) });
  assert.equal(await empty.warmed, false);
  assert.match(errors[2].message, /no examples/);
});

test("a request's embed call failing makes the tier unknown and is reported, never thrown", async () => {
  const errors: Error[] = [];
  let down = false;
  const c = createComplexityClassifier(
    cfg,
    async (texts) => {
      if (down) throw new Error('embedding provider down');
      return texts.map(vectorOf);
    },
    { onError: (e) => errors.push(e) },
  );
  assert.equal(await c.warmed, true);
  down = true;
  assert.equal(await c.classify('hello'), undefined);
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /embedding provider down/);
  down = false;
  assert.equal((await c.classify('hello'))?.tier, 'SIMPLE');
});

test('examples are embedded in batches of batchSize', async () => {
  const fake = fakeEmbed();
  const c = createComplexityClassifier(cfg, fake.embed, { batchSize: 4 });
  assert.equal(await c.warmed, true);
  assert.deepEqual(
    fake.calls.map((b) => b.length),
    [4, 2],
  );
  assert.equal((await c.classify('prove it'))?.tier, 'COMPLEX');
});

test('ComplexityClassifierSchema accepts the documented shape and rejects unknown tiers or floors out of range', () => {
  const check = validator(ComplexityClassifierSchema);
  assert.equal(isFieldErrors(check(cfg)), false);
  assert.equal(isFieldErrors(check({ ...cfg, similarity_floor: 0.75 })), false);
  const unknownTier = check({ ...cfg, examples: { TRIVIAL: ['x'] } });
  assert.ok(isFieldErrors(unknownTier) && unknownTier.some((e) => e.path === 'examples.TRIVIAL'), JSON.stringify(unknownTier));
  const floor = check({ ...cfg, similarity_floor: 1.5 });
  assert.ok(isFieldErrors(floor) && floor.some((e) => e.path === 'similarity_floor'), JSON.stringify(floor));
  const missing = check({ examples: {} });
  assert.ok(isFieldErrors(missing) && missing.some((e) => e.path === 'provider'), JSON.stringify(missing));
});
