// The v1beta1 form of a kind, made from its v1alpha1 form (specs.ts + definitions.ts) by renaming
// fields with names.ts, never written by hand: the spec schema, the CEL rules and their messages,
// the per-path bounds and list extensions, and the printer columns. A kind added to the tables gets
// its v1beta1 form with no work of its own.
import { camelCel, camelJsonPath, camelName, camelPath, camelProse } from './names.ts';
import { mapValues, type JsonSchema } from './json-schema.ts';
import type { CelRule } from './structural.ts';
import type { KindDefinition, PrinterColumn } from './definitions.ts';

/** Every field name a schema declares, at any depth (union branches included). */
export function fieldNames(s: JsonSchema, out = new Set<string>()): Set<string> {
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    out.add(k);
    fieldNames(v, out);
  }
  if (s.items) fieldNames(s.items, out);
  const values = mapValues(s);
  if (values) fieldNames(values, out);
  for (const b of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) fieldNames(b, out);
  return out;
}

/**
 * A JSON Schema with every declared field renamed (properties, `required`, at any depth, union
 * branches included) and field names in descriptions renamed. Map keys are data, not fields: a
 * map's value schema is renamed, its keys are not.
 */
export function camelSchema(s: JsonSchema, fields: ReadonlySet<string> = fieldNames(s)): JsonSchema {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties') {
      const props: Record<string, JsonSchema> = {};
      const from = new Map<string, string>();
      for (const [name, sub] of Object.entries(v as Record<string, JsonSchema>)) {
        const beta = camelName(name);
        // Two fields of one object meeting in one name would make conversion lose one of them.
        if (from.has(beta)) throw new Error(`fields '${from.get(beta)}' and '${name}' both become '${beta}' in v1beta1: add an exception to names.ts`);
        from.set(beta, name);
        props[beta] = camelSchema(sub, fields);
      }
      out.properties = props;
    } else if (k === 'required') out.required = (v as string[]).map(camelName);
    else if (k === 'items' || (k === 'additionalProperties' && typeof v === 'object')) out[k] = camelSchema(v as JsonSchema, fields);
    else if (k === 'patternProperties') out.patternProperties = Object.fromEntries(Object.entries(v as Record<string, JsonSchema>).map(([p, sub]) => [p, camelSchema(sub, fields)]));
    else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') out[k] = (v as JsonSchema[]).map((b) => camelSchema(b, fields));
    else if (k === 'description' && typeof v === 'string') out.description = camelProse(v, fields);
    else out[k] = v;
  }
  return out;
}

export const camelRule = (r: CelRule, fields: ReadonlySet<string>): CelRule => ({
  rule: camelCel(r.rule),
  message: camelProse(r.message, fields),
  ...(r.fieldPath ? { fieldPath: camelCel(r.fieldPath) } : {}),
  ...(r.reason ? { reason: r.reason } : {}),
});

const camelKeys = <T>(o: Readonly<Record<string, T>>, value: (v: T) => T): Record<string, T> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [camelPath(k), value(v)]));

export const camelColumn = (c: PrinterColumn, fields: ReadonlySet<string>): PrinterColumn => ({
  ...c,
  jsonPath: camelJsonPath(c.jsonPath),
  ...(c.description ? { description: camelProse(c.description, fields) } : {}),
});

/** A kind's definition in v1beta1 terms, given the names its v1alpha1 spec declares. */
export function camelDefinition(def: KindDefinition, fields: ReadonlySet<string>): KindDefinition {
  const rule = (r: CelRule) => camelRule(r, fields);
  return {
    ...def,
    rootRules: def.rootRules.map(rule),
    rules: camelKeys(def.rules, (rs) => rs.map(rule)),
    boundsAt: camelKeys(def.boundsAt, (b) => ({ ...b })),
    extensionsAt: camelKeys(def.extensionsAt, (ext) =>
      Object.fromEntries(Object.entries(ext).map(([k, v]) => [k, k === 'x-kubernetes-list-map-keys' ? (v as string[]).map(camelName) : v])) as Record<`x-kubernetes-${string}`, unknown>,
    ),
    columns: def.columns.map((c) => camelColumn(c, fields)),
  };
}
