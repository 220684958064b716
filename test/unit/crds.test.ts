// The CustomResourceDefinitions: committed files equal the generator's output (CI fails on stale
// crds/), the schemas are structural with bounds everywhere, the CEL rules are the expected ones and
// mean what they say (evaluated here with a JS CEL; admission itself is tested against a real
// kube-apiserver elsewhere), and the examples under examples/kubernetes are valid.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Environment, parse as parseCel } from '@marcbachmann/cel-js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildCrds, CRD_DIRS, crdFileName, generateCrdFiles } from '../../operator/src/crds/crd.ts';
import { crdSchemaFiles, schemaFileName } from '../../operator/src/crds/kubeconform-schemas.ts';
import { crSpecs, SECRET_FIELDS } from '../../operator/src/crds/specs.ts';
import { camelName, camelProse } from '../../operator/src/crds/names.ts';
import { fieldNames } from '../../operator/src/crds/versions.ts';
import { convertSpec } from '../../operator/src/conversion/convert.ts';
import type { JsonSchema } from '../../operator/src/crds/json-schema.ts';
import { KINDS, type KindName } from '../../operator/src/resources/kinds.ts';
import { ProviderConfigSchema } from '../../proxy/src/schema/gateway.ts';
import { CustomerSchema, RoutingRuleSchema, TeamSchema, VirtualKeySchema } from '../../proxy/src/schema/governance.ts';
import { WebhookEndpointSchema } from '../../proxy/src/schema/webhooks.ts';
import { McpClientConfigSchema } from '../../proxy/src/schema/mcp.ts';
import { SemanticCachePluginSchema } from '../../proxy/src/schema/cache.ts';
import { validator } from '../../proxy/src/schema/validate.ts';
import { desiredState } from '../../operator/src/resources/desired.ts';
import type { CustomResource } from '../../operator/src/resources/kinds.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const generated = buildCrds();
const crdOf = (kind: KindName) => {
  const g = generated.find((c) => c.definition.kind === kind);
  assert.ok(g, `no CRD for ${kind}`);
  return g.crd as unknown as Crd;
};
const rootSchema = (kind: KindName): JsonSchema => crdOf(kind).spec.versions[0].schema.openAPIV3Schema;
const specSchema = (kind: KindName): JsonSchema => rootSchema(kind).properties?.spec as JsonSchema;

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; listKind: string };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status?: object };
      additionalPrinterColumns: { name: string; jsonPath: string; type: string }[];
      schema: { openAPIV3Schema: JsonSchema };
    }[];
  };
}

describe('generated files are committed', () => {
  test('crds/ and charts/skybridge/crds/ hold exactly what `npm run gen:crds` writes', () => {
    const files = generateCrdFiles();
    assert.equal(files.size, KINDS.length * CRD_DIRS.length);
    for (const [path, text] of files) {
      let current: string;
      try {
        current = readFileSync(join(ROOT, path), 'utf8');
      } catch {
        assert.fail(`${path} is missing: run npm run gen:crds`);
      }
      assert.ok(current === text, `${path} is stale: run npm run gen:crds`);
    }
    for (const dir of CRD_DIRS) {
      const extra = readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.yaml') && !files.has(`${dir}/${f}`));
      assert.deepEqual(extra, [], `${dir} holds files the generator does not write`);
    }
  });

  test('the chart carries the same CRDs as crds/', () => {
    for (const k of generated) {
      const name = crdFileName(k.definition);
      assert.equal(readFileSync(join(ROOT, 'charts/skybridge/crds', name), 'utf8'), readFileSync(join(ROOT, 'crds', name), 'utf8'));
    }
  });
});

describe('the operator <-> proxy contract', () => {
  test('eight namespaced kinds in gateway.skybridge.dev (v1alpha1, and v1beta1 stored) with the agreed plurals', () => {
    const plurals = Object.fromEntries(generated.map((g) => [g.definition.kind, (g.crd as unknown as Crd).spec.names.plural]));
    assert.deepEqual(plurals, {
      Provider: 'providers',
      VirtualKey: 'virtualkeys',
      RoutingRule: 'routingrules',
      Webhook: 'webhooks',
      MCPClient: 'mcpclients',
      CachePolicy: 'cachepolicies',
      Team: 'teams',
      Customer: 'customers',
    });
    for (const g of generated) {
      const crd = g.crd as unknown as Crd;
      assert.equal(crd.spec.group, 'gateway.skybridge.dev');
      assert.equal(crd.spec.scope, 'Namespaced');
      assert.equal(crd.metadata.name, `${crd.spec.names.plural}.gateway.skybridge.dev`);
      assert.deepEqual(crd.spec.versions.map((v) => [v.name, v.served, v.storage]), [['v1alpha1', true, false], ['v1beta1', true, true]]);
    }
  });

  test('status subresource with observedGeneration and metav1.Condition conditions', () => {
    for (const v of KINDS.flatMap(({ kind }) => crdOf(kind).spec.versions)) {
      assert.deepEqual(v.subresources, { status: {} });
      const status = v.schema.openAPIV3Schema.properties?.status as JsonSchema;
      assert.equal(status.properties?.observedGeneration.type, 'integer');
      const conditions = status.properties?.conditions as JsonSchema;
      assert.equal(conditions['x-kubernetes-list-type'], 'map');
      assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type']);
      const item = conditions.items as JsonSchema;
      assert.deepEqual(Object.keys(item.properties ?? {}).sort(), ['lastTransitionTime', 'message', 'observedGeneration', 'reason', 'status', 'type']);
      assert.deepEqual(item.properties?.status.enum, ['True', 'False', 'Unknown']);
    }
  });

  test('printer columns: Ready from the Ready condition, Age, and key spec fields', () => {
    for (const [kind, version] of KINDS.flatMap(({ kind }) => crdOf(kind).spec.versions.map((v) => [kind, v] as const))) {
      const cols = version.additionalPrinterColumns;
      assert.ok(cols.some((c) => c.name === 'Ready' && c.jsonPath === '.status.conditions[?(@.type=="Ready")].status'), kind);
      assert.ok(cols.some((c) => c.name === 'Age' && c.type === 'date'), kind);
      assert.ok(cols.filter((c) => c.jsonPath.startsWith('.spec.')).length >= 2, `${kind}: spec columns`);
      for (const c of cols.filter((x) => x.jsonPath.startsWith('.spec.'))) {
        // A column must name a field the schema has, or it is always empty.
        const path = c.jsonPath.slice('.spec.'.length).split('.');
        let node: JsonSchema | undefined = version.schema.openAPIV3Schema.properties?.spec;
        for (const p of path) node = node?.properties?.[p];
        assert.ok(node, `${kind} ${version.name} column ${c.name}: ${c.jsonPath} is not in the schema`);
      }
    }
  });

  test('secret material is never a field: Secret key references instead', () => {
    const ref = (s: JsonSchema | undefined) => s?.properties?.secretKeyRef?.required;
    assert.deepEqual(ref(specSchema('Provider').properties?.keys.items?.properties?.valueFrom), ['name', 'key']);
    assert.equal(specSchema('Provider').properties?.keys.items?.properties?.value, undefined);
    assert.ok(specSchema('Provider').properties?.keys.items?.required?.includes('valueFrom'));
    assert.deepEqual(ref(specSchema('VirtualKey').properties?.valueFrom), ['name', 'key']);
    assert.equal(specSchema('VirtualKey').properties?.value, undefined);
    assert.ok(specSchema('VirtualKey').required?.includes('valueFrom'));
    assert.deepEqual(ref(specSchema('Webhook').properties?.secretFrom), ['name', 'key']);
    assert.equal(specSchema('Webhook').properties?.secret, undefined);
    assert.deepEqual(ref(specSchema('MCPClient').properties?.headersFrom.additionalProperties as JsonSchema), ['name', 'key']);
    assert.deepEqual(Object.keys(SECRET_FIELDS).sort(), KINDS.map((k) => k.kind).sort());
  });

  test('ids default to metadata.name: no required id; VirtualKey, Team and Customer have none at all (they are referenced by name)', () => {
    for (const kind of ['VirtualKey', 'Team', 'Customer'] as const) {
      assert.equal(specSchema(kind).properties?.id, undefined, kind);
      assert.ok(!specSchema(kind).required?.includes('name'), `${kind}.name must be optional`);
    }
    for (const [kind, field] of [['RoutingRule', 'id'], ['Webhook', 'name'], ['MCPClient', 'client_id'], ['Provider', 'name']] as const) {
      assert.ok(specSchema(kind).properties?.[field], `${kind}.${field}`);
      assert.ok(!specSchema(kind).required?.includes(field), `${kind}.${field} must be optional`);
    }
  });
});

/** Keys a structural CRD schema node may carry (everything we emit; nothing CRDs reject). */
const ALLOWED_KEYS = new Set([
  'description', 'type', 'format', 'properties', 'required', 'items', 'additionalProperties', 'enum', 'pattern',
  'minLength', 'maxLength', 'minItems', 'maxItems', 'maxProperties', 'minimum', 'maximum', 'exclusiveMinimum',
  'exclusiveMaximum', 'nullable', 'anyOf', 'x-kubernetes-validations', 'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys',
]);

function walk(node: JsonSchema, path: string, visit: (n: JsonSchema, path: string) => void): void {
  visit(node, path);
  for (const [k, v] of Object.entries(node.properties ?? {})) walk(v, path ? `${path}.${k}` : k, visit);
  if (node.items) walk(node.items, `${path}[]`, visit);
  if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}.*`, visit);
}

describe('structural schemas', () => {
  for (const { kind } of KINDS) {
    test(`${kind}: typed, bounded, and free of keywords CRDs reject`, () => {
      walk(rootSchema(kind), '', (n, path) => {
        const at = `${kind} ${path || '(root)'}`;
        for (const k of Object.keys(n)) assert.ok(ALLOWED_KEYS.has(k), `${at}: '${k}' is not allowed in a structural schema`);
        const free = n['x-kubernetes-preserve-unknown-fields'] === true || n['x-kubernetes-int-or-string'] === true;
        assert.ok(n.type !== undefined || free, `${at}: no type`);
        if (n.anyOf) assert.deepEqual(n.anyOf, [{ type: 'integer' }, { type: 'string' }], `${at}: anyOf only for int-or-string`);
        if (n.exclusiveMinimum !== undefined) assert.equal(typeof n.exclusiveMinimum, 'boolean', at);
        // apiVersion and kind are the API server's own (no rule reads them): the only strings left unbounded.
        // A date-time's size comes from its format.
        const typeMeta = path === 'apiVersion' || path === 'kind';
        if ((n.type === 'string' || n['x-kubernetes-int-or-string']) && !typeMeta && n.format !== 'date-time') assert.equal(typeof n.maxLength, 'number', `${at}: string without maxLength`);
        if (n.type === 'array') assert.equal(typeof n.maxItems, 'number', `${at}: list without maxItems`);
        if (typeof n.additionalProperties === 'object') {
          assert.equal(typeof n.maxProperties, 'number', `${at}: map without maxProperties`);
          assert.equal(n.properties, undefined, `${at}: properties and additionalProperties are exclusive`);
        }
        assert.notEqual(n.additionalProperties, false, `${at}: additionalProperties false is rejected beside properties`);
        if (n['x-kubernetes-list-type'] === 'map') {
          for (const key of n['x-kubernetes-list-map-keys'] as string[]) assert.ok(n.items?.required?.includes(key), `${at}: map key ${key} must be required`);
        }
        for (const r of (n.required ?? [])) assert.ok(n.properties?.[r], `${at}: required '${r}' is not a property`);
      });
      assert.deepEqual(rootSchema(kind).properties?.metadata, { type: 'object' });
      assert.deepEqual(rootSchema(kind).required, ['spec']);
    });
  }

  test('free-form (preserve-unknown-fields) only where the proxy schema is free-form itself', () => {
    const preserved = Object.fromEntries(generated.map((g) => [g.definition.kind, g.preserved.sort()]));
    assert.deepEqual(preserved, {
      Provider: ['concurrency_and_buffer_size', 'keys[].bedrock_key_config.batch_s3_config', 'pricing_overrides[]', 'proxy_config'],
      VirtualKey: ['mcp_configs[]'],
      RoutingRule: ['query'],
      Webhook: [],
      MCPClient: [],
      CachePolicy: [],
      Team: ['claims', 'config', 'profile'],
      Customer: [],
    });
  });

  test('integer | string becomes x-kubernetes-int-or-string with the branch limits in CEL', () => {
    const ttl = specSchema('CachePolicy').properties?.ttl as JsonSchema;
    assert.equal(ttl['x-kubernetes-int-or-string'], true);
    assert.equal(ttl.type, undefined);
    assert.deepEqual((ttl['x-kubernetes-validations'] as { rule: string }[]).map((r) => r.rule), [
      "type(self) == string ? self.matches(r'^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$') : self >= 0",
    ]);
  });

  test('T | null becomes nullable; literal unions become enums; exclusive limits become booleans', () => {
    assert.deepEqual(pick(specSchema('RoutingRule').properties?.scope_id, ['type', 'nullable']), { type: 'string', nullable: true });
    assert.deepEqual(pick(specSchema('VirtualKey').properties?.provider_configs.items?.properties?.weight, ['type', 'nullable', 'minimum']), { type: 'number', nullable: true, minimum: 0 });
    assert.deepEqual(specSchema('RoutingRule').properties?.scope.enum, ['global', 'customer', 'team', 'virtual_key']);
    assert.deepEqual(pick(specSchema('RoutingRule').properties?.targets.items?.properties?.weight, ['minimum', 'exclusiveMinimum', 'maximum']), { minimum: 0, exclusiveMinimum: true, maximum: 1 });
    assert.equal(specSchema('Webhook').properties?.events['x-kubernetes-list-type'], 'set');
  });
});

const pick = (s: JsonSchema | undefined, keys: string[]) => Object.fromEntries(keys.filter((k) => s?.[k] !== undefined).map((k) => [k, s?.[k]]));

// ---- CEL -----------------------------------------------------------------------------------------

interface RuleAt {
  kind: KindName;
  path: string;
  rule: string;
}

function rulesOf(kind: KindName): RuleAt[] {
  const out: RuleAt[] = [];
  walk(rootSchema(kind), '', (n, path) => {
    for (const r of (n['x-kubernetes-validations'] as { rule: string }[] | undefined) ?? []) out.push({ kind, path, rule: r.rule });
  });
  return out;
}

/** The Kubernetes CEL environment's functions this project relies on (cel-go standard + k8s lists/strings libraries). */
const K8S_CEL_FUNCTIONS = new Set(['has', 'size', 'matches', 'startsWith', 'lowerAscii', 'exists', 'all', 'map', 'sum', 'type']);

describe('CEL validation rules', () => {
  test('every rule, where it is (the spec rules and the checks the proxy makes)', () => {
    const all = KINDS.flatMap((k) => rulesOf(k.kind)).map((r) => `${r.kind} ${r.path || '(root)'}: ${r.rule}`);
    assert.deepEqual(all, [
      "Provider (root): has(self.spec.name) || self.metadata.name.matches(r'^[a-z0-9][a-z0-9_-]*$')",
      'Provider spec: !has(self.custom_provider_config) || has(self.network_config) && (has(self.network_config.base_url) || has(self.network_config.inference_pool))',
      "Provider spec.network_config: !has(self.base_url) || self.base_url.matches('^https?://')",
      'Provider spec.network_config: !has(self.retry_backoff_initial_ms) || !has(self.retry_backoff_max_ms) || self.retry_backoff_initial_ms <= self.retry_backoff_max_ms',
      "Provider spec.network_config.extra_headers.*: !self.startsWith('env.')",
      'VirtualKey (root): size(self.metadata.name) <= 128',
      'VirtualKey spec: !(has(self.budget) && has(self.budget_id))',
      'VirtualKey spec: !(has(self.rateLimit) && has(self.rate_limit_id))',
      'VirtualKey spec: !(has(self.team_id) && has(self.customer_id))',
      'VirtualKey spec.rateLimit: has(self.token_max_limit) || has(self.request_max_limit)',
      'VirtualKey spec.rateLimit: !has(self.token_max_limit) || has(self.token_reset_duration)',
      'VirtualKey spec.rateLimit: !has(self.request_max_limit) || has(self.request_reset_duration)',
      'RoutingRule (root): has(self.spec.id) || size(self.metadata.name) <= 128',
      'RoutingRule spec: self.targets.map(t, t.weight).sum() >= 0.999999 && self.targets.map(t, t.weight).sum() <= 1.000001',
      "RoutingRule spec: has(self.scope) && self.scope != 'global' ? has(self.scope_id) : !has(self.scope_id)",
      'RoutingRule spec.targets[]: !has(self.key_id) || has(self.provider)',
      "Webhook spec: self.url.lowerAscii().startsWith('https://') || (has(self.allow_private_network) && self.allow_private_network && self.url.lowerAscii().startsWith('http://'))",
      'Webhook spec: !has(self.retry_backoff_initial_seconds) || !has(self.retry_backoff_max_seconds) || self.retry_backoff_initial_seconds <= self.retry_backoff_max_seconds',
      "Webhook spec.headers: !self.exists(k, k.lowerAscii() in ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'content-length', 'host'])",
      "Webhook spec.headers: !self.exists(k, k.lowerAscii() in ['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length'] || k.lowerAscii().startsWith('proxy-'))",
      "Webhook spec.headers.*: !self.startsWith('env.')",
      'MCPClient (root): has(self.spec.client_id) || size(self.metadata.name) <= 128',
      "MCPClient spec: self.connection_type != 'http' || (has(self.http_config) || has(self.connection_string))",
      "MCPClient spec: self.connection_type != 'stdio' || (has(self.stdio_config))",
      "MCPClient spec: self.connection_type != 'sse' || (has(self.connection_string))",
      "MCPClient spec: self.connection_type != 'websocket' || (has(self.websocket_config))",
      'MCPClient spec: !has(self.headers) || !has(self.headersFrom) || !self.headersFrom.exists(k, k in self.headers)',
      "MCPClient spec.headers.*: !self.startsWith('env.')",
      "CachePolicy spec: has(self.provider) == has(self.embedding_model)",
      'CachePolicy spec: has(self.provider) || self.dimension == 1',
      "CachePolicy spec.ttl: type(self) == string ? self.matches(r'^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$') : self >= 0",
      'Team (root): size(self.metadata.name) <= 128',
      'Team spec: !(has(self.budget) && has(self.budget_id))',
      'Team spec: !(has(self.rateLimit) && has(self.rate_limit_id))',
      'Team spec.rateLimit: has(self.token_max_limit) || has(self.request_max_limit)',
      'Team spec.rateLimit: !has(self.token_max_limit) || has(self.token_reset_duration)',
      'Team spec.rateLimit: !has(self.request_max_limit) || has(self.request_reset_duration)',
      'Customer (root): size(self.metadata.name) <= 128',
      'Customer spec: !(has(self.budget) && has(self.budget_id))',
      'Customer spec: !(has(self.rateLimit) && has(self.rate_limit_id))',
      'Customer spec.rateLimit: has(self.token_max_limit) || has(self.request_max_limit)',
      'Customer spec.rateLimit: !has(self.token_max_limit) || has(self.token_reset_duration)',
      'Customer spec.rateLimit: !has(self.request_max_limit) || has(self.request_reset_duration)',
    ]);
  });

  test('every rule parses as CEL and calls only functions Kubernetes provides', () => {
    for (const { kind } of KINDS) {
      for (const r of rulesOf(kind)) {
        assert.doesNotThrow(() => parseCel(r.rule), `${kind} ${r.path}: ${r.rule}`);
        const calls = [...r.rule.replace(/r?'[^']*'/g, "''").matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)].map((m) => m[1]);
        for (const c of calls) assert.ok(K8S_CEL_FUNCTIONS.has(c), `${kind} ${r.path}: ${c}() is not a Kubernetes CEL function`);
      }
    }
  });

  test('every rule has a message; fieldPaths name fields of the node', () => {
    for (const { kind } of KINDS) {
      walk(rootSchema(kind), '', (n, path) => {
        for (const r of (n['x-kubernetes-validations'] as { message?: string; fieldPath?: string }[] | undefined) ?? []) {
          assert.ok(r.message && r.message.length > 10, `${kind} ${path}: message`);
          if (r.fieldPath) assert.ok(n.properties?.[r.fieldPath.slice(1)], `${kind} ${path}: fieldPath ${r.fieldPath}`);
        }
      });
    }
  });
});

// A CEL evaluation of the rules over an object, the way the API server sees it: integers as CEL
// ints, null optional fields as absent. `sum()` is the Kubernetes lists library's.
const cel = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false }).registerFunction('list.sum(): double', (l: unknown) =>
  (l as number[]).reduce((a, b) => a + b, 0),
);

function toCel(schema: JsonSchema, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if ((schema.type === 'integer' || schema['x-kubernetes-int-or-string']) && typeof value === 'number') return BigInt(value);
  if (Array.isArray(value)) return value.map((v) => (schema.items ? toCel(schema.items, v) : v));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === null && schema.properties) continue;
      const sub = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      out[k] = sub ? toCel(sub, v) : v;
    }
    return out;
  }
  return value;
}

/** Messages of the rules `value` breaks, with the path of the node. */
function celViolations(schema: JsonSchema, value: unknown, path = ''): string[] {
  if (value === undefined || value === null) return [];
  const out: string[] = [];
  const self = toCel(schema, value);
  for (const r of (schema['x-kubernetes-validations'] as { rule: string; message: string }[] | undefined) ?? []) {
    let ok: unknown;
    try {
      ok = cel.evaluate(r.rule, { self });
    } catch (err) {
      ok = `error: ${(err as Error).message}`;
    }
    if (ok !== true) out.push(`${path || '(root)'}: ${r.message}${ok === false ? '' : ` (${String(ok)})`}`);
  }
  if (Array.isArray(value)) value.forEach((v, i) => schema.items && out.push(...celViolations(schema.items, v, `${path}[${i}]`)));
  else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const sub = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (sub) out.push(...celViolations(sub, v, path ? `${path}.${k}` : k));
    }
  }
  return out;
}

const cr = (kind: KindName, spec: Record<string, unknown>, name = 'sample') => ({ apiVersion: 'gateway.skybridge.dev/v1alpha1', kind, metadata: { name }, spec });
const betaRoot = (kind: KindName): JsonSchema => crdOf(kind).spec.versions[1].schema.openAPIV3Schema;
/**
 * The rules `spec` breaks (v1alpha1), checked to be the same in v1beta1: the spec converted there
 * breaks the same rules, whose messages and paths name the v1beta1 fields.
 */
const violations = (kind: KindName, spec: Record<string, unknown>, name?: string) => {
  const alpha = celViolations(rootSchema(kind), cr(kind, spec, name));
  const beta = celViolations(betaRoot(kind), { ...cr(kind, convertSpec(kind, spec, 'v1alpha1', 'v1beta1') as Record<string, unknown>, name), apiVersion: 'gateway.skybridge.dev/v1beta1' });
  const fields = fieldNames(crSpecs()[kind]);
  const renamed = alpha.map((m) => {
    const at = m.indexOf(': ');
    return `${m.slice(0, at).replace(/[A-Za-z_][A-Za-z0-9_]*/g, camelName)}: ${camelProse(m.slice(at + 2), fields)}`;
  });
  assert.deepEqual(beta, renamed, `${kind}: v1beta1 rules disagree with v1alpha1 on ${JSON.stringify(spec)}`);
  return alpha;
};
const secretRef = { secretKeyRef: { name: 's', key: 'k' } };

describe('CEL rules accept and reject what they say', () => {
  test('RoutingRule: weights sum to 1 within 1e-6', () => {
    const rule = (weights: number[]) => ({ name: 'r', targets: weights.map((w) => ({ provider: 'openai', weight: w })) });
    assert.deepEqual(violations('RoutingRule', rule([1])), []);
    assert.deepEqual(violations('RoutingRule', rule([0.3333333, 0.3333333, 0.3333334])), []);
    assert.deepEqual(violations('RoutingRule', rule([0.7, 0.2, 0.1])), []);
    assert.deepEqual(violations('RoutingRule', rule([0.5, 0.4])), ['spec: the weights of targets must sum to 1 (within 0.000001)']);
    assert.deepEqual(violations('RoutingRule', rule([0.6, 0.6])), ['spec: the weights of targets must sum to 1 (within 0.000001)']);
    assert.deepEqual(violations('RoutingRule', rule([0.5, 0.500002])), ['spec: the weights of targets must sum to 1 (within 0.000001)']);
  });

  test('RoutingRule: scope_id required unless scope is global', () => {
    const base = { targets: [{ weight: 1 }] };
    const scopeMessage = 'spec: scope_id is required unless scope is global, and must be omitted or null for global scope';
    assert.deepEqual(violations('RoutingRule', { ...base, scope: 'team', scope_id: 'ml' }), []);
    assert.deepEqual(violations('RoutingRule', { ...base, scope: 'global' }), []);
    assert.deepEqual(violations('RoutingRule', { ...base, scope: 'global', scope_id: null }), []);
    assert.deepEqual(violations('RoutingRule', base), []);
    assert.deepEqual(violations('RoutingRule', { ...base, scope: 'team' }), [scopeMessage]);
    assert.deepEqual(violations('RoutingRule', { ...base, scope: 'virtual_key', scope_id: null }), [scopeMessage]);
    assert.deepEqual(violations('RoutingRule', { ...base, scope: 'global', scope_id: 'x' }), [scopeMessage]);
    assert.deepEqual(violations('RoutingRule', { ...base, scope_id: 'x' }), [scopeMessage]);
  });

  test('RoutingRule: key_id requires provider; a long metadata.name needs spec.id', () => {
    assert.deepEqual(violations('RoutingRule', { targets: [{ provider: 'openai', key_id: 'k', weight: 1 }] }), []);
    assert.deepEqual(violations('RoutingRule', { targets: [{ model: 'gpt-4o', key_id: 'k', weight: 1 }] }), ['targets[0]: key_id requires provider'].map((m) => `spec.${m}`));
    const long = 'r'.repeat(200);
    assert.equal(violations('RoutingRule', { targets: [{ weight: 1 }] }, long).length, 1);
    assert.deepEqual(violations('RoutingRule', { id: 'short', targets: [{ weight: 1 }] }, long), []);
  });

  test('Webhook: https unless allow_private_network; reserved headers; backoff order', () => {
    const base = { url: 'https://hooks.example.com/x', events: ['async_job.completed'] };
    const urlMessage = 'spec: url must be https (plain http only with allow_private_network: true)';
    assert.deepEqual(violations('Webhook', base), []);
    assert.deepEqual(violations('Webhook', { ...base, url: 'HTTPS://Hooks.Example.com/' }), []);
    assert.deepEqual(violations('Webhook', { ...base, url: 'http://10.0.0.5/hook' }), [urlMessage]);
    assert.deepEqual(violations('Webhook', { ...base, url: 'http://10.0.0.5/hook', allow_private_network: false }), [urlMessage]);
    assert.deepEqual(violations('Webhook', { ...base, url: 'http://10.0.0.5/hook', allow_private_network: true }), []);
    assert.deepEqual(violations('Webhook', { ...base, url: 'ftp://x/hook', allow_private_network: true }), [urlMessage]);
    assert.deepEqual(violations('Webhook', { ...base, headers: { 'x-team': 'a', Authorization: 'b' } }), []);
    assert.equal(violations('Webhook', { ...base, headers: { 'Webhook-Signature': 'v1,forged' } }).length, 1);
    assert.equal(violations('Webhook', { ...base, headers: { 'content-type': 'text/plain' } }).length, 1);
    // Hop-by-hop headers, as the gateway refuses them at load.
    assert.deepEqual(violations('Webhook', { ...base, headers: { 'Transfer-Encoding': 'chunked' } }), [
      'spec.headers: headers cannot set hop-by-hop headers (connection, keep-alive, transfer-encoding, te, trailer, upgrade, host, content-length, proxy-*)',
    ]);
    assert.equal(violations('Webhook', { ...base, headers: { 'Proxy-Authorization': 'Basic x' } }).length, 1);
    assert.deepEqual(violations('Webhook', { ...base, headers: { 'x-leak': 'env.PROVIDER_DEFAULT_OPENAI_KEYS_0_VALUE', 'x-env': 'prod.env.x' } }).map((m) => m.split(':')[0]), ['spec.headers.x-leak']);
    assert.deepEqual(violations('Webhook', { ...base, retry_backoff_initial_seconds: 30, retry_backoff_max_seconds: 1800 }), []);
    assert.deepEqual(violations('Webhook', { ...base, retry_backoff_initial_seconds: 60, retry_backoff_max_seconds: 30 }), ['spec: retry_backoff_max_seconds must be >= retry_backoff_initial_seconds']);
  });

  test('VirtualKey: inline budget xor budget_id, team xor customer, complete rate limits', () => {
    const base = { valueFrom: secretRef };
    assert.deepEqual(violations('VirtualKey', { ...base, budget: { max_limit: 10, reset_duration: '1d' }, team_id: 't' }), []);
    assert.equal(violations('VirtualKey', { ...base, budget: { max_limit: 10, reset_duration: '1d' }, budget_id: 'b' }).length, 1);
    assert.equal(violations('VirtualKey', { ...base, rateLimit: { request_max_limit: 5, request_reset_duration: '1m' }, rate_limit_id: 'r' }).length, 1);
    assert.equal(violations('VirtualKey', { ...base, team_id: 't', customer_id: 'c' }).length, 1);
    assert.deepEqual(violations('VirtualKey', { ...base, rateLimit: {} }), ['spec.rateLimit: needs token_max_limit or request_max_limit']);
    assert.deepEqual(violations('VirtualKey', { ...base, rateLimit: { token_max_limit: 1000 } }), ['spec.rateLimit: token_reset_duration is required with token_max_limit']);
    assert.deepEqual(violations('VirtualKey', { ...base, rateLimit: { request_max_limit: 5 } }), ['spec.rateLimit: request_reset_duration is required with request_max_limit']);
    assert.equal(violations('VirtualKey', base, 'k'.repeat(129)).length, 1);
  });

  test('Team and Customer: inline budget xor budget_id, complete rate limits, a name that fits the id', () => {
    for (const kind of ['Team', 'Customer'] as const) {
      const owner = kind.toLowerCase();
      assert.deepEqual(violations(kind, { budget: { max_limit: 10, reset_duration: '1d' }, rateLimit: { request_max_limit: 5, request_reset_duration: '1m' } }), []);
      assert.deepEqual(violations(kind, { budget: { max_limit: 10, reset_duration: '1d' }, budget_id: 'b' }), [`spec: set budget (this ${owner}'s own) or budget_id, not both`]);
      assert.deepEqual(violations(kind, { rateLimit: { request_max_limit: 5, request_reset_duration: '1m' }, rate_limit_id: 'r' }), [`spec: set rateLimit (this ${owner}'s own) or rate_limit_id, not both`]);
      assert.deepEqual(violations(kind, { rateLimit: { token_max_limit: 1000 } }), ['spec.rateLimit: token_reset_duration is required with token_max_limit']);
      assert.deepEqual(violations(kind, { rateLimit: {} }), ['spec.rateLimit: needs token_max_limit or request_max_limit']);
      assert.deepEqual(violations(kind, {}, 'n'.repeat(129)), [`(root): metadata.name is the ${owner} id: at most 128 characters`]);
    }
    assert.deepEqual(violations('Team', { customer_id: 'acme', profile: { anything: ['goes'] } }), []);
  });

  test('MCPClient: each connection type has its connection settings; a header is set once', () => {
    assert.deepEqual(violations('MCPClient', { connection_type: 'http', connection_string: 'https://mcp.example.com' }), []);
    assert.deepEqual(violations('MCPClient', { connection_type: 'http', http_config: { url: 'https://mcp.example.com' } }), []);
    assert.deepEqual(violations('MCPClient', { connection_type: 'http' }), ['spec: connection_type http needs http_config or connection_string']);
    assert.deepEqual(violations('MCPClient', { connection_type: 'stdio', connection_string: 'x' }), ['spec: connection_type stdio needs stdio_config']);
    assert.deepEqual(violations('MCPClient', { connection_type: 'stdio', stdio_config: { command: 'npx' } }), []);
    assert.deepEqual(violations('MCPClient', { connection_type: 'sse' }), ['spec: connection_type sse needs connection_string']);
    assert.deepEqual(violations('MCPClient', { connection_type: 'websocket', websocket_config: { url: 'wss://x' } }), []);
    const both = { connection_type: 'sse', connection_string: 'https://x', headers: { Authorization: 'a' }, headersFrom: { Authorization: secretRef } };
    assert.deepEqual(violations('MCPClient', both), ['spec: a header is set in headers or in headersFrom, not both']);
    assert.deepEqual(violations('MCPClient', { ...both, headers: { 'x-other': 'a' } }), []);
    assert.match(violations('MCPClient', { connection_type: 'sse', connection_string: 'https://x', headers: { Authorization: 'env.VIRTUALKEY_DEFAULT_A_VALUE' } }).join(), /env\. references are not allowed in custom resources/);
  });

  test('CachePolicy: semantic needs provider and model, direct-only needs dimension 1; ttl duration or seconds', () => {
    assert.deepEqual(violations('CachePolicy', { provider: 'openai', embedding_model: 'text-embedding-3-small', dimension: 1536 }), []);
    assert.deepEqual(violations('CachePolicy', { provider: 'openai', embedding_model: 'm', dimension: 1 }), []);
    assert.deepEqual(violations('CachePolicy', { dimension: 1, ttl: '1h30m' }), []);
    assert.deepEqual(violations('CachePolicy', { dimension: 1, ttl: 300 }), []);
    assert.deepEqual(violations('CachePolicy', { provider: 'openai', dimension: 1536 }), ['spec: provider and embedding_model go together: both for semantic mode, neither for direct-only']);
    assert.deepEqual(violations('CachePolicy', { dimension: 1536 }), ['spec: direct-only mode (no provider) needs dimension 1']);
    assert.equal(violations('CachePolicy', { dimension: 1, ttl: '5 minutes' }).length, 1);
    assert.equal(violations('CachePolicy', { dimension: 1, ttl: -1 }).length, 1);
  });

  test('Provider: metadata.name must be a provider name unless spec.name; custom providers need a base URL', () => {
    const keys = [{ name: 'k', valueFrom: secretRef }];
    assert.deepEqual(violations('Provider', { keys }, 'openai'), []);
    assert.equal(violations('Provider', { keys }, 'openai.eu').length, 1);
    assert.deepEqual(violations('Provider', { keys, name: 'openai-eu' }, 'openai.eu'), []);
    assert.equal(violations('Provider', { keys, network_config: { extra_headers: { 'x-org': 'env.WEBHOOK_DEFAULT_W_SECRET' } } }, 'openai').length, 1);
    assert.deepEqual(violations('Provider', { keys, network_config: { extra_headers: { 'x-org': 'org-1' } } }, 'openai'), []);
    const custom = { keys, custom_provider_config: { base_provider_type: 'openai' } };
    assert.deepEqual(violations('Provider', custom, 'corp'), ['spec: a custom provider (custom_provider_config) needs network_config.base_url (or network_config.inference_pool)']);
    assert.deepEqual(violations('Provider', { ...custom, network_config: { base_url: 'https://llm.corp' } }, 'corp'), []);
    // Its servers come from an InferencePool instead.
    assert.deepEqual(violations('Provider', { ...custom, network_config: { inference_pool: { name: 'llama' } } }, 'corp'), []);
    assert.deepEqual(violations('Provider', { keys, network_config: { base_url: 'llm.corp' } }), ['spec.network_config: base_url must be an absolute http(s) URL']);
    assert.deepEqual(violations('Provider', { keys, network_config: { retry_backoff_initial_ms: 900, retry_backoff_max_ms: 100 } }), [
      'spec.network_config: retry_backoff_max_ms must be >= retry_backoff_initial_ms',
    ]);
  });
});

// ---- examples ------------------------------------------------------------------------------------

const EXAMPLES = join(ROOT, 'examples/kubernetes');
const exampleDocs = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => parseAllDocuments(readFileSync(join(EXAMPLES, f), 'utf8')).map((d) => ({ file: f, doc: d.toJS() as { apiVersion: string; kind: string; metadata: { name: string }; spec: unknown } })));

describe('examples/kubernetes', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const schemas = new Map(generated.flatMap((g) => crdSchemaFiles(g.crd, true)).map((f) => [f.name, ajv.compile(f.schema)]));

  test('every kind has an example', () => {
    const kinds = new Set(exampleDocs.map((d) => d.doc.kind));
    for (const { kind } of KINDS) assert.ok(kinds.has(kind), `no example ${kind}`);
  });

  for (const { file, doc } of exampleDocs.filter((d) => d.doc.apiVersion.startsWith('gateway.skybridge.dev/'))) {
    test(`${file}: ${doc.kind} ${doc.metadata.name} is valid (schema without unknown fields, CEL rules)`, () => {
      const validate = schemas.get(schemaFileName(doc.kind, doc.apiVersion));
      assert.ok(validate, `no schema for ${doc.kind}`);
      assert.ok(validate(doc), JSON.stringify(validate.errors));
      assert.deepEqual(celViolations(rootSchema(doc.kind as KindName), doc), []);
    });
  }

  test('the operator accepts every example and renders them into a valid configuration', () => {
    const secret = exampleDocs.find((d) => d.doc.kind === 'Secret')?.doc as unknown as { metadata: { name: string }; stringData: Record<string, string> };
    const data = Object.fromEntries(Object.entries(secret.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    const crs = exampleDocs
      .filter((d) => d.doc.kind !== 'Secret')
      .map((d) => ({ ...d.doc, metadata: { ...d.doc.metadata, namespace: 'skybridge', generation: 1 } }) as unknown as CustomResource);
    const state = desiredState(crs, { get: (ns, name) => (ns === 'skybridge' && name === secret.metadata.name ? data : undefined) });
    const rejected = [...state.verdicts].filter(([, v]) => !v.accepted).map(([ref, v]) => `${ref}: ${v.message}`);
    assert.deepEqual(rejected, []);
    assert.equal(state.verdicts.size, crs.length);
    assert.deepEqual(state.unattributed, []);
  });

  test('examples reference only the example Secret and its keys', () => {
    const secret = exampleDocs.find((d) => d.doc.kind === 'Secret')?.doc as unknown as { metadata: { name: string }; stringData: Record<string, string> };
    const refs: { name: string; key: string }[] = [];
    JSON.stringify(exampleDocs.map((d) => d.doc), (k, v: unknown) => {
      if (k === 'secretKeyRef') refs.push(v as { name: string; key: string });
      return v;
    });
    assert.ok(refs.length >= 6);
    for (const r of refs) {
      assert.equal(r.name, secret.metadata.name);
      assert.ok(r.key in secret.stringData, `missing key ${r.key}`);
    }
  });
});

// ---- the specs follow the proxy's schemas --------------------------------------------------------

/** Every field path of a JSON Schema (`a.b`, `list[].c`, `map.*`), unions contributing all branches. */
function fieldPaths(s: JsonSchema, path = '', out = new Set<string>()): Set<string> {
  for (const b of s.anyOf ?? s.oneOf ?? []) fieldPaths(b, path, out);
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const p = path ? `${path}.${k}` : k;
    out.add(p);
    fieldPaths(v, p, out);
  }
  if (s.items) fieldPaths(s.items, `${path}[]`, out);
  const values = s.patternProperties ? Object.values(s.patternProperties)[0] : typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  if (values) fieldPaths(values, `${path}.*`, out);
  return out;
}

const plain = (s: unknown): JsonSchema => JSON.parse(JSON.stringify(s)) as JsonSchema;
const difference = (a: Set<string>, b: Set<string>) => [...a].filter((x) => !b.has(x)).sort();

/** A resource's own budget and rate limit, without the fields the reference gateway reports. */
const INLINE_LIMITS = ['budget', 'budget.max_limit', 'budget.reset_duration', 'budget.calendar_aligned', 'rateLimit', 'rateLimit.token_max_limit', 'rateLimit.token_reset_duration', 'rateLimit.request_max_limit', 'rateLimit.request_reset_duration'];

const CLOUD_CREDENTIALS = [
  'keys[].bedrock_key_config.access_key',
  'keys[].bedrock_key_config.secret_key',
  'keys[].bedrock_key_config.session_token',
  'keys[].vertex_key_config.auth_credentials',
];

describe('each spec is the proxy resource with only the contract changes', () => {
  const cases: { kind: KindName; proxy: JsonSchema; rename?: (p: string) => string; removed: string[]; added: string[] }[] = [
    {
      kind: 'Provider',
      proxy: plain(ProviderConfigSchema),
      removed: ['keys[].value', ...CLOUD_CREDENTIALS],
      added: ['name', ...['keys[].value', ...CLOUD_CREDENTIALS].flatMap((f) => [`${f}From`, `${f}From.secretKeyRef`, `${f}From.secretKeyRef.key`, `${f}From.secretKeyRef.name`])],
    },
    {
      kind: 'VirtualKey',
      proxy: plain(VirtualKeySchema),
      removed: ['id', 'value'],
      added: ['valueFrom', 'valueFrom.secretKeyRef', 'valueFrom.secretKeyRef.key', 'valueFrom.secretKeyRef.name', ...INLINE_LIMITS],
    },
    { kind: 'RoutingRule', proxy: plain(RoutingRuleSchema), removed: ['created_at', 'updated_at'], added: [] },
    { kind: 'Team', proxy: plain(TeamSchema), removed: ['id'], added: INLINE_LIMITS },
    { kind: 'Customer', proxy: plain(CustomerSchema), removed: ['id'], added: INLINE_LIMITS },
    { kind: 'Webhook', proxy: plain(WebhookEndpointSchema), removed: ['secret'], added: ['secretFrom', 'secretFrom.secretKeyRef', 'secretFrom.secretKeyRef.key', 'secretFrom.secretKeyRef.name'] },
    { kind: 'MCPClient', proxy: plain(McpClientConfigSchema), removed: [], added: ['headersFrom', 'headersFrom.*.secretKeyRef', 'headersFrom.*.secretKeyRef.key', 'headersFrom.*.secretKeyRef.name'] },
    { kind: 'CachePolicy', proxy: plain(SemanticCachePluginSchema), rename: (p) => p.replace(/^config\./, ''), removed: ['name', 'config'], added: [] },
  ];
  for (const c of cases) {
    test(`${c.kind}`, () => {
      const proxy = new Set([...fieldPaths(c.proxy)].map(c.rename ?? ((p) => p)));
      const crd = fieldPaths(specSchema(c.kind));
      assert.deepEqual(difference(proxy, crd), c.removed.sort(), 'fields of the proxy resource the CRD lacks');
      assert.deepEqual(difference(crd, proxy), c.added.sort(), 'fields only the CRD has');
    });
  }

  test('a spec with its secrets filled in is a valid proxy resource', () => {
    const specs = crSpecs();
    const ajv = new Ajv2020({ strict: false });
    for (const { file, doc } of exampleDocs.filter((d) => d.doc.apiVersion.startsWith('gateway.skybridge.dev/'))) {
      assert.ok(ajv.validate(specs[doc.kind as KindName], doc.spec), `${file} ${doc.metadata.name}: ${JSON.stringify(ajv.errors)}`);
    }
    // The Provider example as config.json: valueFrom -> value.
    const provider = exampleDocs.find((d) => d.doc.kind === 'Provider')?.doc.spec as { keys: Record<string, unknown>[] };
    const config = { ...provider, keys: provider.keys.map(({ valueFrom: _v, ...k }) => ({ ...k, value: 'sk-x' })) };
    assert.ok(!Array.isArray(validator(ProviderConfigSchema)(config)));
  });
});
