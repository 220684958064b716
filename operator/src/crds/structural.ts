// JSON Schema (the proxy's TypeBox schemas) -> a Kubernetes structural OpenAPI v3 schema:
//   - every node typed; unions become enums (literals), `nullable` (T | null),
//     `x-kubernetes-int-or-string` (integer | string, the branch limits as a CEL rule), and only
//     otherwise `x-kubernetes-preserve-unknown-fields` (recorded, so a new one is noticed in review);
//   - `Type.Record` maps -> `additionalProperties` (open `unknown` maps -> preserve-unknown-fields);
//   - no `const`, `patternProperties`, `uniqueItems`, numeric `exclusiveMinimum`, `additionalProperties: false`,
//     `default` or `format`, which CRDs reject or would apply differently from the proxy;
//   - `maxLength`/`maxItems`/`maxProperties` on every string, list and map, because the API server
//     estimates CEL rule cost from them (an unbounded string counts as the whole request);
//   - CEL rules (`x-kubernetes-validations`) attached at the paths a kind asks for.
import { mapValues, type JsonSchema } from './json-schema.ts';

export interface Bounds {
  maxLength: number;
  maxItems: number;
  maxProperties: number;
}

/** Used where the proxy's schema sets no bound. Generous: they exist for the cost estimator, not as policy. */
export const DEFAULT_BOUNDS: Bounds = { maxLength: 1024, maxItems: 1000, maxProperties: 1000 };

export interface CelRule {
  rule: string;
  message: string;
  /** Field the error is reported on, relative to the node holding the rule (`.scope_id`). */
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden' | 'FieldValueDuplicate';
}

export interface StructuralOptions {
  /** Bounds for nodes whose schema sets none, by path (`network_config.ca_cert_pem`). */
  boundsAt?: Readonly<Record<string, Partial<Bounds>>>;
  /** CEL rules by path of the node they validate ('' = the root). */
  rules?: Readonly<Record<string, readonly CelRule[]>>;
  /** Kubernetes extensions merged into the node at a path (`x-kubernetes-list-type: map` and its keys). */
  extensionsAt?: Readonly<Record<string, Readonly<Record<`x-kubernetes-${string}`, unknown>>>>;
}

export interface StructuralResult {
  schema: JsonSchema;
  /** Paths left as `x-kubernetes-preserve-unknown-fields` (free-form by design, or a union CRDs cannot type). */
  preserved: string[];
}

export function toStructural(source: JsonSchema, opts: StructuralOptions = {}): StructuralResult {
  const preserved: string[] = [];
  const visited = new Set<string>();
  const convert = (s: JsonSchema, path: string): JsonSchema => {
    visited.add(path);
    const out: JsonSchema = { ...convertNode(s, path, convert, preserved, { ...DEFAULT_BOUNDS, ...opts.boundsAt?.[path] }), ...opts.extensionsAt?.[path] };
    const rules = opts.rules?.[path];
    if (rules?.length) out['x-kubernetes-validations'] = [...((out['x-kubernetes-validations'] as CelRule[] | undefined) ?? []), ...rules.map(ruleObject)];
    return out;
  };
  const schema = convert(source, '');
  for (const p of [opts.rules, opts.boundsAt, opts.extensionsAt].flatMap((o) => Object.keys(o ?? {}))) {
    if (!visited.has(p)) throw new Error(`CEL rule, bound or extension for '${p}', which the schema does not have`);
  }
  return { schema, preserved };
}

type Convert = (s: JsonSchema, path: string) => JsonSchema;

function convertNode(s: JsonSchema, path: string, convert: Convert, preserved: string[], bounds: Bounds): JsonSchema {
  const head: JsonSchema = s.description ? { description: s.description } : {};
  const union = s.anyOf ?? s.oneOf;
  // The union's own description wins over its branch's; `head` first keeps `description` on top.
  if (union) return { ...head, ...convertUnion(union, path, convert, preserved, bounds), ...head };
  if (s.allOf) throw new Error(`${where(path)}: allOf is not supported; express the rule in CEL`);
  if (s.const !== undefined) return { ...head, ...literalEnum([s]) };
  switch (s.type) {
    case 'object':
      return { ...head, ...convertObject(s, path, convert, preserved, bounds) };
    case 'array':
      return { ...head, ...convertArray(s, path, convert, bounds) };
    case 'string':
      return { ...head, type: 'string', ...pick(s, ['minLength']), maxLength: s.maxLength ?? bounds.maxLength, ...pick(s, ['pattern', 'enum']) };
    case 'number':
    case 'integer':
      return { ...head, type: s.type, ...numberLimits(s) };
    case 'boolean':
      return { ...head, type: 'boolean' };
    case undefined:
      if (Object.keys(s).every((k) => k === 'description' || k === 'default')) {
        // Type.Unknown(): any JSON value, kept as written.
        preserved.push(path);
        return { ...head, 'x-kubernetes-preserve-unknown-fields': true };
      }
      throw new Error(`${where(path)}: a schema without a type: ${JSON.stringify(s)}`);
    default:
      throw new Error(`${where(path)}: type '${s.type}' has no CRD equivalent`);
  }
}

function convertUnion(branches: JsonSchema[], path: string, convert: Convert, preserved: string[], bounds: Bounds): JsonSchema {
  const nonNull = branches.filter((b) => b.type !== 'null');
  const nullable = nonNull.length < branches.length ? { nullable: true } : {};
  if (nonNull.every((b) => b.const !== undefined)) return { ...literalEnum(nonNull), ...nullable };
  // Same path: convertNode, not convert, so the path's rules are attached once (by the caller).
  if (nonNull.length === 1) return { ...convertNode(nonNull[0], path, convert, preserved, bounds), ...nullable };
  const types = nonNull.map((b) => b.type).sort().join('|');
  if (types === 'integer|string' && !nullable.nullable) {
    const str = nonNull.find((b) => b.type === 'string') as JsonSchema;
    const int = nonNull.find((b) => b.type === 'integer') as JsonSchema;
    return {
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      maxLength: str.maxLength ?? bounds.maxLength,
      'x-kubernetes-validations': [ruleObject(intOrStringRule(int, str))],
    };
  }
  // string | object and the like: Kubernetes cannot type it. The proxy still validates the value.
  preserved.push(path);
  return { 'x-kubernetes-preserve-unknown-fields': true, ...nullable };
}

function convertObject(s: JsonSchema, path: string, convert: Convert, preserved: string[], bounds: Bounds): JsonSchema {
  const values = mapValues(s);
  if (s.properties && Object.keys(s.properties).length) {
    if (values) throw new Error(`${where(path)}: an object with both properties and a map schema`);
    const properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, convert(v, join(path, k))]));
    const required = (s.required ?? []).filter((r) => r in properties);
    const open = s.additionalProperties === true;
    if (open) preserved.push(path);
    return { type: 'object', properties, ...(required.length ? { required } : {}), ...(open ? { 'x-kubernetes-preserve-unknown-fields': true } : {}) };
  }
  if (values && Object.keys(values).some((k) => k !== 'description')) {
    return { type: 'object', maxProperties: s.maxProperties ?? bounds.maxProperties, additionalProperties: convert(values, join(path, '*')) };
  }
  // A map of anything, or an object with no declared fields: free-form.
  preserved.push(path);
  return { type: 'object', ...(s.maxProperties !== undefined ? { maxProperties: s.maxProperties } : {}), 'x-kubernetes-preserve-unknown-fields': true };
}

function convertArray(s: JsonSchema, path: string, convert: Convert, bounds: Bounds): JsonSchema {
  if (!s.items) throw new Error(`${where(path)}: an array without items`);
  const items = convert(s.items, `${path}[]`);
  const out: JsonSchema = { type: 'array', ...pick(s, ['minItems']), maxItems: s.maxItems ?? bounds.maxItems, items };
  if (s.uniqueItems) {
    // CRDs forbid uniqueItems (quadratic); a set list type gives the same guarantee for scalars.
    if (items.type === 'object' || items.type === 'array' || !items.type) throw new Error(`${where(path)}: uniqueItems on non-scalar items`);
    out['x-kubernetes-list-type'] = 'set';
  }
  return out;
}

function literalEnum(branches: JsonSchema[]): JsonSchema {
  const values = branches.map((b) => b.const);
  const types = new Set(values.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v)));
  if (types.size !== 1) throw new Error(`literals of mixed types: ${JSON.stringify(values)}`);
  const type = [...types][0];
  if (type !== 'string' && type !== 'integer' && type !== 'number' && type !== 'boolean') throw new Error(`literal of type ${type}`);
  return { type, enum: values, ...(type === 'string' ? { maxLength: Math.max(...values.map((v) => String(v).length)) } : {}) };
}

function numberLimits(s: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  // JSON Schema 2019+ writes exclusive limits as numbers; OpenAPI v3.0 (CRDs) as booleans beside minimum/maximum.
  if (typeof s.exclusiveMinimum === 'number') Object.assign(out, { minimum: s.exclusiveMinimum, exclusiveMinimum: true });
  else if (s.minimum !== undefined) out.minimum = s.minimum;
  if (typeof s.exclusiveMaximum === 'number') Object.assign(out, { maximum: s.exclusiveMaximum, exclusiveMaximum: true });
  else if (s.maximum !== undefined) out.maximum = s.maximum;
  return out;
}

/** The limits of both branches of an integer | string union, which the int-or-string node cannot carry. */
function intOrStringRule(int: JsonSchema, str: JsonSchema): CelRule {
  const strConds: string[] = [];
  const strWords: string[] = [];
  if (str.pattern) {
    strConds.push(`self.matches(${celString(str.pattern)})`);
    strWords.push(`matching ${str.pattern}`);
  }
  if (str.minLength) strConds.push(`size(self) >= ${str.minLength}`);
  const intConds: string[] = [];
  const intWords: string[] = [];
  if (int.minimum !== undefined) {
    intConds.push(`self >= ${int.minimum}`);
    intWords.push(`>= ${int.minimum}`);
  }
  if (int.maximum !== undefined) {
    intConds.push(`self <= ${int.maximum}`);
    intWords.push(`<= ${int.maximum}`);
  }
  const cond = (c: string[]) => (c.length ? c.join(' && ') : 'true');
  return {
    rule: `type(self) == string ? ${cond(strConds)} : ${cond(intConds)}`,
    message: `must be an integer${intWords.length ? ` ${intWords.join(' and ')}` : ''} or a string${strWords.length ? ` ${strWords.join(' ')}` : ''}`,
  };
}

/** A CEL string literal (raw strings keep regular expressions readable). */
export function celString(s: string): string {
  if (!s.includes("'")) return `r'${s}'`;
  if (!s.includes('"')) return `r"${s}"`;
  return JSON.stringify(s);
}

function ruleObject(r: CelRule): JsonSchema {
  return { rule: r.rule, message: r.message, ...(r.fieldPath ? { fieldPath: r.fieldPath } : {}), ...(r.reason ? { reason: r.reason } : {}) };
}

function pick(s: JsonSchema, keys: readonly (keyof JsonSchema)[]): JsonSchema {
  return Object.fromEntries(keys.filter((k) => s[k] !== undefined).map((k) => [k, s[k]]));
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);
const where = (path: string): string => `schema node '${path || '(root)'}'`;
