// The v1beta1 API: its field names come from the v1alpha1 ones by one rule (names.ts), every kind
// gets it from the same schemas, and conversion between the versions is lossless in both
// directions on a generated spec with every field of each kind.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ACRONYMS, EXCEPTIONS, camelCel, camelName, camelPath, camelProse } from '../../operator/src/crds/names.ts';
import { buildCrds } from '../../operator/src/crds/crd.ts';
import { crSpecs } from '../../operator/src/crds/specs.ts';
import { fieldNames } from '../../operator/src/crds/versions.ts';
import { crdSchemaFiles, schemaFileName } from '../../operator/src/crds/kubeconform-schemas.ts';
import { mapValues, type JsonSchema } from '../../operator/src/crds/json-schema.ts';
import { ConversionError, convertObject, convertSpec, toInternal } from '../../operator/src/conversion/convert.ts';
import { KINDS, type KindName } from '../../operator/src/resources/kinds.ts';

const generated = buildCrds();
const specs = crSpecs();
type Version = { name: string; served: boolean; storage: boolean; deprecated?: boolean; schema: { openAPIV3Schema: JsonSchema }; additionalPrinterColumns: { name: string; jsonPath: string }[] };
const versionsOf = (kind: KindName): Version[] => (generated.find((g) => g.definition.kind === kind)?.crd as unknown as { spec: { versions: Version[] } }).spec.versions;
const versionOf = (kind: KindName, name: string): Version => versionsOf(kind).find((v) => v.name === name) as Version;
const specOf = (kind: KindName, version: string): JsonSchema => versionOf(kind, version).schema.openAPIV3Schema.properties?.spec as JsonSchema;

/** Every field path of a structural schema (`a.b`, `list[].c`, `map.*`). */
function paths(s: JsonSchema, path = '', out: string[] = []): string[] {
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const p = path ? `${path}.${k}` : k;
    out.push(p);
    paths(v, p, out);
  }
  if (s.items) paths(s.items, `${path}[]`, out);
  const values = mapValues(s);
  if (values) paths(values, `${path}.*`, out);
  return out;
}

/** Fields (properties at any depth) without a description; a list's or map's own description covers its items. */
function undescribed(s: JsonSchema, path = '', out: string[] = []): string[] {
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const p = path ? `${path}.${k}` : k;
    if (!v.description) out.push(p);
    undescribed(v, p, out);
  }
  if (s.items) undescribed(s.items, `${path}[]`, out);
  const values = mapValues(s);
  if (values) undescribed(values, `${path}.*`, out);
  return out;
}

describe('the name rule', () => {
  test('snake_case becomes camelCase, acronyms in capitals after the first word, camelCase stays', () => {
    const cases: [string, string][] = [
      ['allowed_models', 'allowedModels'],
      ['provider_configs', 'providerConfigs'],
      ['key_ids', 'keyIDs'],
      ['base_url', 'baseURL'],
      ['client_id', 'clientID'],
      ['ca_cert_pem', 'caCertPEM'],
      ['cel_expression', 'celExpression'],
      ['is_code_mode_client', 'isCodeModeClient'],
      ['retry_backoff_initial_ms', 'retryBackoffInitialMs'],
      ['access_keyFrom', 'accessKeyFrom'],
      ['valueFrom', 'valueFrom'],
      ['rateLimit', 'rateLimit'],
      ['url', 'url'],
      ['id', 'id'],
      ['ttl', 'ttl'],
    ];
    for (const [alpha, beta] of cases) assert.equal(camelName(alpha), beta, alpha);
    for (const [lower, upper] of ACRONYMS) assert.equal(upper.toLowerCase(), lower);
  });

  test('every exception is a field some kind has, and differs from what the rule gives', () => {
    const all = new Set(Object.values(specs).flatMap((s) => [...fieldNames(s)]));
    for (const [alpha, beta] of EXCEPTIONS) {
      assert.ok(all.has(alpha), `exception '${alpha}' names no field`);
      assert.notEqual(beta, alpha.split('_').map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w)).join(''), `exception '${alpha}' is what the rule gives`);
    }
  });

  test('paths, CEL field selections and prose are renamed; string literals and values are not', () => {
    assert.equal(camelPath('network_config.extra_headers.*'), 'networkConfig.extraHeaders.*');
    assert.equal(camelPath('keys[].bedrock_key_config'), 'keys[].bedrockKeyConfig');
    assert.equal(camelCel("has(self.scope) && self.scope != 'virtual_key' ? has(self.scope_id) : true"), "has(self.scope) && self.scope != 'virtual_key' ? has(self.scopeID) : true");
    assert.equal(camelCel("self.targets.map(t, t.key_id).exists(k, k.lowerAscii().startsWith(r'a_b'))"), "self.targets.map(t, t.keyID).exists(k, k.lowerAscii().startsWith(r'a_b'))");
    const fields = new Set(['budget_id', 'network_config', 'base_url']);
    assert.equal(camelProse('set budget or budget_id, not both; needs network_config.base_url', fields), 'set budget or budgetID, not both; needs networkConfig.baseURL');
    assert.equal(camelProse('events such as async_job.completed; spec.budget_id', fields), 'events such as async_job.completed; spec.budgetID');
  });
});

describe('both versions are served, v1beta1 is stored', () => {
  for (const { kind } of KINDS) {
    test(`${kind}: v1alpha1 (deprecated) and v1beta1 (storage), conversion by webhook`, () => {
      const crd = generated.find((g) => g.definition.kind === kind)?.crd as unknown as { spec: { conversion: { strategy: string; webhook: { conversionReviewVersions: string[] } } } };
      assert.deepEqual(versionsOf(kind).map((v) => [v.name, v.served, v.storage, v.deprecated ?? false]), [['v1alpha1', true, false, true], ['v1beta1', true, true, false]]);
      assert.equal(crd.spec.conversion.strategy, 'Webhook');
      assert.deepEqual(crd.spec.conversion.webhook.conversionReviewVersions, ['v1']);
    });

    test(`${kind}: v1beta1 has every v1alpha1 field, renamed, and every name is lowerCamelCase`, () => {
      const alpha = paths(specOf(kind, 'v1alpha1'));
      const beta = paths(specOf(kind, 'v1beta1'));
      assert.deepEqual(alpha.map(camelPath).sort(), [...beta].sort());
      for (const p of beta) {
        for (const seg of p.split('.')) {
          const name = seg.replace(/(\[\])+$/, '');
          if (name !== '*') assert.match(name, /^[a-z][A-Za-z0-9]*$/, `${kind} ${p}`);
        }
      }
    });

    test(`${kind}: every v1beta1 field has a description, and printer columns name v1beta1 fields`, () => {
      const missing = undescribed(specOf(kind, 'v1beta1'));
      assert.deepEqual(missing, [], `${kind}: fields without a description (kubectl explain shows nothing)`);
      for (const c of versionOf(kind, 'v1beta1').additionalPrinterColumns.filter((x) => x.jsonPath.startsWith('.spec.'))) {
        let node: JsonSchema | undefined = specOf(kind, 'v1beta1');
        for (const p of c.jsonPath.slice('.spec.'.length).split('.')) node = node?.properties?.[p];
        assert.ok(node, `${kind} column ${c.name}: ${c.jsonPath} is not in the v1beta1 schema`);
      }
      const cols = versionOf(kind, 'v1beta1').additionalPrinterColumns.map((x) => x.name);
      assert.ok(cols.includes('Reason') && cols.includes('Message'), `${kind}: the Reason and Message columns`);
    });
  }
});

// ---- conversion ----------------------------------------------------------------------------------

/**
 * A spec with every field of a kind's schema set (one item per list, one entry per map, the first
 * branch of a union that has fields), so a round trip goes through every name. Map keys have an
 * underscore: they are data and must come back unchanged.
 */
function fullSpec(s: JsonSchema): unknown {
  const branches = (s.anyOf ?? s.oneOf)?.filter((b) => b.type !== 'null');
  if (branches?.length) return fullSpec(branches.find((b) => b.properties || b.items) ?? branches[0]);
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[0];
  switch (s.type) {
    case 'object': {
      if (s.properties && Object.keys(s.properties).length) return Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, fullSpec(v)]));
      const values = mapValues(s);
      return values ? { some_key: fullSpec(values) } : { free_form: { left_as: 'is' } };
    }
    case 'array':
      return s.items ? [fullSpec(s.items)] : [];
    case 'string':
      return 'x_y';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    default:
      return { any_value: ['kept'] };
  }
}

const objectOf = (kind: KindName, version: string, spec: unknown) => ({ apiVersion: `gateway.skybridge.dev/${version}`, kind, metadata: { name: 'sample', namespace: 'team-a', annotations: { some_note: 'x' } }, spec, status: { reason: 'Served', conditions: [] } });

describe('conversion', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const strict = new Map(generated.flatMap((g) => crdSchemaFiles(g.crd, true)).map((f) => [f.name, ajv.compile(f.schema)]));
  /** Fields a schema version does not have (ajv's additionalProperties errors on the strict schema). */
  const unknownFields = (obj: { kind: string; apiVersion: string }) => {
    const validate = strict.get(schemaFileName(obj.kind, obj.apiVersion));
    assert.ok(validate);
    validate(obj);
    return (validate.errors ?? []).filter((e) => e.keyword === 'additionalProperties').map((e) => `${e.instancePath}/${String(e.params.additionalProperty)}`);
  };

  for (const { kind } of KINDS) {
    test(`${kind}: a spec with every field goes to v1beta1 and back unchanged, and fits each version's schema`, () => {
      const alpha = objectOf(kind, 'v1alpha1', fullSpec(specs[kind]));
      const beta = convertObject(alpha, 'v1beta1') as typeof alpha;
      assert.equal(beta.apiVersion, 'gateway.skybridge.dev/v1beta1');
      assert.deepEqual(beta.metadata, alpha.metadata);
      assert.deepEqual(beta.status, alpha.status);
      assert.notDeepEqual(beta.spec, alpha.spec);
      assert.deepEqual(unknownFields(alpha), []);
      assert.deepEqual(unknownFields(beta), [], 'the converted object has fields the v1beta1 schema lacks');
      assert.deepEqual(convertObject(beta, 'v1alpha1'), alpha);
      assert.deepEqual(convertObject(convertObject(beta, 'v1alpha1'), 'v1beta1'), beta);
      // Same version: nothing changes.
      assert.deepEqual(convertObject(alpha, 'v1alpha1'), alpha);
    });
  }

  test('map keys and free-form values keep their names', () => {
    const spec = { network_config: { extra_headers: { x_org_id: 'a' }, base_url: 'https://x' }, keys: [{ name: 'k', valueFrom: { secretKeyRef: { name: 's', key: 'k_1' } }, models: ['m'] }], proxy_config: { some_field: 1 } };
    const beta = convertSpec('Provider', spec, 'v1alpha1', 'v1beta1');
    assert.deepEqual(beta, { networkConfig: { extraHeaders: { x_org_id: 'a' }, baseURL: 'https://x' }, keys: [{ name: 'k', valueFrom: { secretKeyRef: { name: 's', key: 'k_1' } }, models: ['m'] }], proxyConfig: { some_field: 1 } });
  });

  test('a field the version does not have, or a value of the wrong kind, fails naming the field', () => {
    assert.throws(() => convertSpec('VirtualKey', { budgetID: 'b' }, 'v1alpha1', 'v1beta1'), (e: unknown) => e instanceof ConversionError && e.field === 'spec.budgetID' && /unknown field/.test(e.message));
    assert.throws(() => convertSpec('VirtualKey', { budget_id: 'b' }, 'v1beta1', 'v1alpha1'), (e: unknown) => e instanceof ConversionError && e.field === 'spec.budget_id');
    assert.throws(() => convertSpec('Provider', { networkConfig: 'https://x' }, 'v1beta1', 'v1alpha1'), /spec\.networkConfig: must be an object, got a string/);
    assert.throws(() => convertSpec('Provider', { keys: { a: 1 } }, 'v1beta1', 'v1alpha1'), /spec\.keys: must be a list, got an object/);
    assert.throws(() => convertSpec('RoutingRule', { targets: [{ weight: 1 }, { key_ids: 'x' }] }, 'v1beta1', 'v1alpha1'), /spec\.targets\[1\]\.key_ids: unknown field/);
  });

  test('the operator reads either version into the v1alpha1 shape; one it cannot read is refused by field', () => {
    const beta = objectOf('VirtualKey', 'v1beta1', { valueFrom: { secretKeyRef: { name: 's', key: 'k' } }, providerConfigs: [{ provider: 'openai', allowedModels: ['gpt-4o'] }], teamID: 'ml' });
    const internal = toInternal(beta, 'VirtualKey');
    assert.equal(internal.conversionError, undefined);
    assert.deepEqual(internal.spec, { valueFrom: { secretKeyRef: { name: 's', key: 'k' } }, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'] }], team_id: 'ml' });
    const alpha = objectOf('VirtualKey', 'v1alpha1', { provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'] }] });
    assert.deepEqual(toInternal(alpha, 'VirtualKey').spec, alpha.spec);
    assert.deepEqual(toInternal(objectOf('VirtualKey', 'v1beta1', { allowed_models: ['x'] }), 'VirtualKey').conversionError, {
      path: 'allowed_models',
      message: 'cannot be read as gateway.skybridge.dev/v1alpha1: unknown field (v1beta1 has no such field here)',
    });
  });
});

