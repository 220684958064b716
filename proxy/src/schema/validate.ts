// ajv, compiled once per schema, with errors turned into "where and why" a person can act on.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Static, TSchema } from '@sinclair/typebox';

const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false });
const compiled = new WeakMap<TSchema, ValidateFunction>();

export interface FieldError {
  /** JSON path of the offending field, e.g. `providers.openai.keys[0].weight`. */
  path: string;
  message: string;
}

/**
 * The schema's check, compiled on its first use: every operation's request schema is declared at
 * start, but ajv's generated code (several MB of heap for them all) is built only for the
 * operations a gateway is actually asked for.
 */
export function validator<T extends TSchema>(schema: T): (value: unknown) => FieldError[] | Static<T> {
  let check: ValidateFunction | undefined;
  return (value: unknown) => {
    check ??= compile(schema);
    return check(value) ? (value as Static<T>) : toFieldErrors(check.errors ?? []);
  };
}

function compile(schema: TSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

export function isFieldErrors(v: unknown): v is FieldError[] {
  return Array.isArray(v) && (v.length === 0 || (typeof v[0] === 'object' && v[0] !== null && 'path' in v[0] && 'message' in v[0]));
}

export function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    // A union failing reports every branch; the parent's own message says enough.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    let path = jsonPath(e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const field = String((e.params as { additionalProperty: string }).additionalProperty);
      path = path ? `${path}.${field}` : field;
      message = 'unknown field';
    } else if (e.keyword === 'required') {
      const field = String((e.params as { missingProperty: string }).missingProperty);
      path = path ? `${path}.${field}` : field;
      message = 'is required';
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    }
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: path || '(root)', message });
  }
  collapseUnionBranches(out);
  return out;
}

/** Several `must be "x"` errors on one path come from a union of literals: say it once. */
function collapseUnionBranches(errors: FieldError[]): void {
  const byPath = new Map<string, FieldError[]>();
  for (const e of errors) if (e.message.startsWith('must be "')) byPath.set(e.path, [...(byPath.get(e.path) ?? []), e]);
  for (const [path, group] of byPath) {
    if (group.length < 2) continue;
    const values = group.map((g) => g.message.slice('must be '.length)).join(', ');
    const first = errors.indexOf(group[0]);
    for (const g of group) errors.splice(errors.indexOf(g), 1);
    errors.splice(first, 0, { path, message: `must be one of ${values}` });
  }
}

function jsonPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}
