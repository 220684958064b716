// Validation of the cache plugin's config and its vector store (spec rules 6 and 9): errors name
// the field and say why. Rule 9 is checked where a person writes the document (start-up, /api).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig, ConfigError } from '../../proxy/src/config/load.ts';
import { vectorStoreProblem } from '../../proxy/src/schema/cache.ts';

const providers = { openai: { keys: [{ name: 'k', value: 'sk-test', weight: 1 }] } };
const doc = (config: Record<string, unknown>, vectorStore: unknown = { enabled: true, type: 'sqlite' }, enabled = true) => ({
  providers,
  ...(vectorStore !== null && { vector_store: vectorStore }),
  plugins: [{ name: 'semantic_cache', enabled, config }],
});

function errorsOf(raw: unknown): string[] {
  try {
    checkConfig(raw, 'test');
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return (err as ConfigError).errors.map((e) => `${e.path}: ${e.message}`);
  }
}

test('valid: direct-only on sqlite, semantic with provider and model, any store when the plugin is disabled', () => {
  assert.deepEqual(errorsOf(doc({ dimension: 1 })), []);
  assert.deepEqual(errorsOf(doc({ provider: 'openai', embedding_model: 'text-embedding-3-small', dimension: 1536, ttl: '1h', threshold: 0.9 })), []);
  assert.deepEqual(errorsOf(doc({ dimension: 1 }, { enabled: true, type: 'sqlite', config: { path: 'elsewhere.db' } })), []);
  assert.deepEqual(errorsOf(doc({ dimension: 1 }, null, false)), []);
});

test('rule 9: an enabled cache needs an enabled vector store this gateway runs', () => {
  const problem = (d: Record<string, unknown>) => {
    const p = vectorStoreProblem(d);
    return p && `${p.path}: ${p.message}`;
  };
  assert.equal(problem(doc({ dimension: 1 })), undefined);
  assert.equal(problem(doc({ dimension: 1 }, null, false)), undefined, 'a disabled cache needs no store');
  assert.match(problem(doc({ dimension: 1 }, null))!, /^vector_store: an enabled vector_store is required before the semantic_cache plugin can be enabled/);
  assert.match(problem(doc({ dimension: 1 }, { enabled: false, type: 'sqlite' }))!, /^vector_store: /);
  assert.match(problem(doc({ dimension: 1 }, { enabled: true, type: 'pinecone' }))!, /^vector_store.type: 'pinecone' cannot back/);
  // A document Kubernetes renders is not refused for it (the cache stays off there): checkConfig passes.
  assert.deepEqual(errorsOf(doc({ dimension: 1 }, null)), []);
});

test('semantic mode needs provider and embedding_model; dimension 1 with a provider is a semantic config, accepted (rule 6)', () => {
  assert.match(errorsOf(doc({ embedding_model: 'm', dimension: 8 })).join(), /plugins\[0\]\.config\.embedding_model: is not allowed without provider/);
  assert.match(errorsOf(doc({ provider: 'openai', dimension: 8 })).join(), /plugins\[0\]\.config\.embedding_model: is required when provider is set/);
  assert.deepEqual(errorsOf(doc({ provider: 'openai', embedding_model: 'm', dimension: 1 })), []);
  assert.match(errorsOf(doc({})).join(), /plugins\[0\]\.config\.dimension/);
  assert.match(errorsOf(doc({ dimension: 1, ttl: 'forever' })).join(), /plugins\[0\]\.config\.ttl/);
  assert.match(errorsOf(doc({ dimension: 1, threshold: 1.5 })).join(), /plugins\[0\]\.config\.threshold/);
  assert.match(errorsOf(doc({ dimension: 1, surprise: true })).join(), /plugins\[0\]\.config\.surprise: unknown field/);
});

test('the sqlite store takes only a path', () => {
  assert.match(errorsOf(doc({ dimension: 1 }, { enabled: true, type: 'sqlite', config: { addr: 'x' } })).join(), /vector_store.config.path/);
});
