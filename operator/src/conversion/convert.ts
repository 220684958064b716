// Conversion between the served versions, pure and lossless in both directions: the spec's fields
// are renamed along the kind's shape (shape.ts, from the one v1alpha1 schema), map keys and
// free-form values are kept as they are, metadata and status are the same in both versions. An
// object that does not fit (a field the kind does not have, a list where an object belongs) is a
// ConversionError naming the field in the version it came in.
import { crSpecs } from '../crds/specs.ts';
import { GROUP, KINDS, VERSIONS, type ApiVersionName, type KindName } from '../resources/kinds.ts';
import { shapeOf, type ObjectShape, type Shape } from './shape.ts';

export class ConversionError extends Error {
  /** The field at fault, e.g. `spec.network_config.base_urls` (in the names of the version it came in). */
  readonly field: string;
  /** What is wrong with it. */
  readonly reason: string;
  constructor(field: string, reason: string) {
    super(`${field}: ${reason}`);
    this.field = field;
    this.reason = reason;
  }
}

let shapes: Map<string, Shape> | undefined;

/** Each kind's spec shape, read once from the schemas. */
export function specShape(kind: string): Shape | undefined {
  shapes ??= new Map(Object.entries(crSpecs()).map(([k, s]) => [k, shapeOf(s)]));
  return shapes.get(kind);
}

export const isKind = (kind: unknown): kind is KindName => KINDS.some((k) => k.kind === kind);

/** `gateway.skybridge.dev/v1beta1` -> `v1beta1`, or undefined for another group or version. */
export function versionOf(apiVersion: unknown): ApiVersionName | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  const [group, version] = apiVersion.split('/');
  return group === GROUP && (VERSIONS as readonly string[]).includes(version) ? (version as ApiVersionName) : undefined;
}

/** A spec in `from`'s names -> the same spec in `to`'s names. Throws ConversionError. */
export function convertSpec(kind: KindName, spec: unknown, from: ApiVersionName, to: ApiVersionName): unknown {
  const shape = specShape(kind);
  if (!shape) throw new ConversionError('kind', `'${kind}' is not a kind of ${GROUP}`);
  if (from === to || spec === undefined) return spec;
  return walk(spec, shape, to === 'v1beta1' ? 'alpha' : 'beta', 'spec');
}

type Side = 'alpha' | 'beta';

function walk(value: unknown, shape: Shape, from: Side, path: string): unknown {
  if (value === null || value === undefined) return value;
  switch (shape.type) {
    case 'value':
      return value;
    case 'object':
      return object(value, shape, from, path);
    case 'list':
      if (!Array.isArray(value)) throw new ConversionError(path, `must be a list, got ${describe(value)}`);
      return value.map((v, i) => walk(v, shape.items, from, `${path}[${i}]`));
    case 'map': {
      if (!isPlainObject(value)) throw new ConversionError(path, `must be an object (a map), got ${describe(value)}`);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(v, shape.values, from, `${path}.${k}`);
      return out;
    }
    case 'union':
      if (Array.isArray(value)) return shape.list ? walk(value, shape.list, from, path) : value;
      if (isPlainObject(value)) return shape.object ? object(value, shape.object, from, path) : value;
      return value;
  }
}

function object(value: unknown, shape: ObjectShape, from: Side, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw new ConversionError(path, `must be an object, got ${describe(value)}`);
  const fields = from === 'alpha' ? shape.alpha : shape.beta;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const field = fields.get(k);
    const at = `${path}.${k}`;
    if (!field) {
      if (!shape.open) throw new ConversionError(at, `unknown field (${from === 'alpha' ? 'v1alpha1' : 'v1beta1'} has no such field here)`);
      out[k] = v;
      continue;
    }
    if (field.name in out) throw new ConversionError(at, `set twice (as '${k}' and under another name)`);
    out[field.name] = walk(v, field.shape, from, at);
  }
  return out;
}

/** A whole custom resource (apiVersion, kind, metadata, spec, status) in the `to` version. */
export function convertObject(obj: unknown, to: ApiVersionName): Record<string, unknown> {
  if (!isPlainObject(obj)) throw new ConversionError('object', `must be an object, got ${describe(obj)}`);
  const from = versionOf(obj.apiVersion);
  if (!from) throw new ConversionError('apiVersion', `must be ${VERSIONS.map((v) => `${GROUP}/${v}`).join(' or ')}, got ${JSON.stringify(obj.apiVersion)}`);
  if (!isKind(obj.kind)) throw new ConversionError('kind', `must be one of ${KINDS.map((k) => k.kind).join(', ')}, got ${JSON.stringify(obj.kind)}`);
  const out: Record<string, unknown> = { ...obj, apiVersion: `${GROUP}/${to}` };
  if ('spec' in obj) out.spec = convertSpec(obj.kind, obj.spec, from, to);
  return out;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * A custom resource as read from the API, in whichever served version, -> the operator's working
 * shape (v1alpha1's field names, which its translation to config.json is written for). One that
 * cannot be converted keeps its spec and says why in `conversionError`, so it is refused by name.
 */
export function toInternal(obj: Record<string, unknown>, kind: KindName): Record<string, unknown> & { conversionError?: { path: string; message: string } } {
  const from = versionOf(obj.apiVersion) ?? 'v1alpha1';
  if (from === 'v1alpha1') return { ...obj, kind };
  try {
    return { ...obj, kind, apiVersion: `${GROUP}/v1alpha1`, spec: convertSpec(kind, obj.spec, from, 'v1alpha1') };
  } catch (err) {
    if (!(err instanceof ConversionError)) throw err;
    // Paths of refusals are relative to the spec, in the names the object was written with.
    return { ...obj, kind, conversionError: { path: err.field.replace(/^spec\.?/, '') || '(root)', message: `cannot be read as ${GROUP}/v1alpha1: ${err.reason}` } };
  }
}
