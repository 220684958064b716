// The field layout of a kind's spec, read off its v1alpha1 JSON Schema (crds/specs.ts): which
// values are objects with named fields (renamed between versions), lists, maps (keys are data and
// keep their names) or anything else (copied as it is). Conversion walks values along it.
import { mapValues, type JsonSchema } from '../crds/json-schema.ts';
import { camelName } from '../crds/names.ts';

export type Shape = ObjectShape | ListShape | MapShape | UnionShape | { type: 'value' };

export interface ObjectShape {
  type: 'object';
  /** v1alpha1 name -> v1beta1 name and the field's shape. */
  alpha: Map<string, { name: string; shape: Shape }>;
  /** v1beta1 name -> v1alpha1 name and the field's shape. */
  beta: Map<string, { name: string; shape: Shape }>;
  /** Fields the schema does not declare are allowed (and copied as they are). */
  open: boolean;
}

export interface ListShape {
  type: 'list';
  items: Shape;
}

export interface MapShape {
  type: 'map';
  values: Shape;
}

/** A value that may be an object, a list or a scalar (`string | {..}`): the value's own type picks. */
export interface UnionShape {
  type: 'union';
  object?: ObjectShape;
  list?: ListShape;
}

const VALUE: Shape = { type: 'value' };

export function shapeOf(s: JsonSchema): Shape {
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return union(branches.filter((b) => b.type !== 'null').map(shapeOf));
  if (s.type === 'array' && s.items) return { type: 'list', items: shapeOf(s.items) };
  if (s.type === 'object') {
    if (s.properties && Object.keys(s.properties).length) {
      const shape: ObjectShape = { type: 'object', alpha: new Map(), beta: new Map(), open: s.additionalProperties === true };
      for (const [name, sub] of Object.entries(s.properties)) addField(shape, name, shapeOf(sub));
      return shape;
    }
    const values = mapValues(s);
    if (values && Object.keys(values).some((k) => k !== 'description')) return { type: 'map', values: shapeOf(values) };
  }
  return VALUE;
}

function addField(shape: ObjectShape, alpha: string, field: Shape): void {
  const beta = camelName(alpha);
  const other = shape.beta.get(beta);
  if (other && other.name !== alpha) throw new Error(`fields '${other.name}' and '${alpha}' both become '${beta}' in v1beta1`);
  shape.alpha.set(alpha, { name: beta, shape: field });
  shape.beta.set(beta, { name: alpha, shape: field });
}

function union(shapes: Shape[]): Shape {
  if (shapes.length === 1) return shapes[0];
  const out: UnionShape = { type: 'union' };
  for (const s of shapes.flatMap((x) => (x.type === 'union' ? [x.object, x.list].filter((y): y is ObjectShape | ListShape => y !== undefined) : [x]))) {
    if (s.type === 'object') out.object = out.object ? mergeObjects(out.object, s) : s;
    else if (s.type === 'list') out.list = out.list ? { type: 'list', items: union([out.list.items, s.items]) } : s;
    else if (s.type === 'map') out.object = out.object ? { ...out.object, open: true } : { type: 'object', alpha: new Map(), beta: new Map(), open: true };
  }
  return out.object || out.list ? out : VALUE;
}

/** Two object branches of a union: their fields together (a field in both gets both shapes). */
function mergeObjects(a: ObjectShape, b: ObjectShape): ObjectShape {
  const out: ObjectShape = { type: 'object', alpha: new Map(), beta: new Map(), open: a.open || b.open };
  for (const [name, f] of a.alpha) addField(out, name, f.shape);
  for (const [name, f] of b.alpha) {
    const mine = out.alpha.get(name);
    addField(out, name, mine ? union([mine.shape, f.shape]) : f.shape);
  }
  return out;
}
