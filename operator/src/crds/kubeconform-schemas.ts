// OpenAPI v3 schemas (our CRDs, and the Kubernetes API's own OpenAPI documents) -> standalone JSON
// Schema files named the way kubeconform looks them up (`{{ .ResourceKind }}{{ .KindSuffix }}.json`:
// `deployment-apps-v1.json`, `virtualkey-gateway-v1alpha1.json`), so manifests validate offline.
// Strict files reject unknown fields, like `kubeconform -strict` expects of its schema registry.
import type { JsonSchema } from './json-schema.ts';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

export interface SchemaFile {
  /** File name within the schema directory. */
  name: string;
  schema: JsonSchema;
}

/** kubeconform's file name for a kind: lowercase kind, then `-<first label of the group>-<version>`. */
export function schemaFileName(kind: string, apiVersion: string): string {
  const [groupOrVersion, version] = apiVersion.split('/');
  const suffix = version === undefined ? `-${groupOrVersion}` : `-${groupOrVersion.split('.')[0]}-${version}`;
  return `${kind.toLowerCase()}${suffix.toLowerCase()}.json`;
}

/** One file per served version of a CustomResourceDefinition. */
export function crdSchemaFiles(crd: unknown, strict: boolean): SchemaFile[] {
  const c = crd as { spec: { group: string; names: { kind: string }; versions: { name: string; served?: boolean; schema?: { openAPIV3Schema?: JsonSchema } }[] } };
  return c.spec.versions
    .filter((v) => v.served !== false && v.schema?.openAPIV3Schema)
    .map((v) => ({
      name: schemaFileName(c.spec.names.kind, `${c.spec.group}/${v.name}`),
      schema: { $schema: DRAFT, ...convert(v.schema?.openAPIV3Schema as JsonSchema, strict) },
    }));
}

interface OpenApiDocument {
  components?: { schemas?: Record<string, JsonSchema> };
}

interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/**
 * One file per kind of a Kubernetes OpenAPI v3 document (`api/openapi-spec/v3/*.json` of
 * k8s.io/kubernetes) that `wanted` accepts. Each file carries the definitions its kind reaches.
 */
export function openApiSchemaFiles(doc: OpenApiDocument, strict: boolean, wanted: (gvk: Gvk) => boolean = () => true): SchemaFile[] {
  const components = doc.components?.schemas ?? {};
  const files: SchemaFile[] = [];
  for (const [name, schema] of Object.entries(components)) {
    const gvks = (schema['x-kubernetes-group-version-kind'] as Gvk[] | undefined) ?? [];
    for (const gvk of gvks) {
      if (!wanted(gvk)) continue;
      const defs: Record<string, JsonSchema> = {};
      for (const dep of reachable(name, components)) defs[dep] = convert(components[dep], strict);
      files.push({
        name: schemaFileName(gvk.kind, gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version),
        schema: { $schema: DRAFT, $ref: `#/$defs/${name}`, $defs: defs },
      });
    }
  }
  return files;
}

/** `name` and every component it refers to, transitively. */
function reachable(name: string, components: Record<string, JsonSchema>): string[] {
  const seen = new Set<string>();
  const visit = (n: string) => {
    if (seen.has(n) || !components[n]) return;
    seen.add(n);
    JSON.stringify(components[n], (k, v: unknown) => {
      if (k === '$ref' && typeof v === 'string') visit(v.replace('#/components/schemas/', ''));
      return v;
    });
  };
  visit(name);
  return [...seen];
}

/** OpenAPI v3.0 dialect -> JSON Schema 2020-12, recursively. */
function convert(node: JsonSchema, strict: boolean): JsonSchema {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'nullable' || k === 'exclusiveMinimum' || k === 'exclusiveMaximum' || k === 'x-kubernetes-validations') continue;
    if (k === '$ref' && typeof v === 'string') out.$ref = v.replace('#/components/schemas/', '#/$defs/');
    else if (k === 'properties' && v && typeof v === 'object') out.properties = Object.fromEntries(Object.entries(v as Record<string, JsonSchema>).map(([p, s]) => [p, convert(s, strict)]));
    else if ((k === 'items' || k === 'additionalProperties' || k === 'not') && v && typeof v === 'object') out[k] = convert(v as JsonSchema, strict);
    else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) out[k] = (v as JsonSchema[]).map((s) => convert(s, strict));
    else out[k] = v;
  }
  // OpenAPI v3.0 writes exclusive limits as booleans beside minimum/maximum.
  if (node.exclusiveMinimum === true && node.minimum !== undefined) {
    out.exclusiveMinimum = node.minimum;
    delete out.minimum;
  }
  if (node.exclusiveMaximum === true && node.maximum !== undefined) {
    out.exclusiveMaximum = node.maximum;
    delete out.maximum;
  }
  if (node['x-kubernetes-int-or-string'] === true) {
    delete out.anyOf;
    out.type = ['integer', 'string'];
  }
  if (node.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  // The API server prunes unknown fields; strict validation reports them instead.
  if (strict && out.properties && out.additionalProperties === undefined && node['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }
  return out;
}
