// Management API failures as the gateway error object: 400 naming every invalid field by its path
// in the request body, 404 for an unknown id, 409 for a duplicate or a record still referenced.
import type { TSchema, Static } from '@sinclair/typebox';
import { GatewayError } from '../unified/errors.ts';
import { validator, type FieldError } from '../schema/validate.ts';
import { ConfigError } from '../config/load.ts';

export const notFound = (what: string, id: string): GatewayError =>
  new GatewayError(404, `${what} '${id}' not found`, { type: 'not_found_error', code: 'not_found' });

export const conflict = (message: string, param?: string): GatewayError =>
  new GatewayError(409, message, { type: 'conflict_error', code: 'conflict', param: param ?? null });

/** One 400 listing every problem; `param` is the first field's path. */
export function invalidFields(what: string, errors: readonly FieldError[]): GatewayError {
  const list = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  return new GatewayError(400, `invalid ${what}: ${list}`, { param: errors[0]?.path ?? null, code: 'invalid_field' });
}

/** A JSON object body, else 400. */
/** What answers add to an object to say who owns it (managed.ts): a client writing an answer back sends them too. */
const OWNERSHIP_FIELDS = ['owner', 'managed_by', 'source'];

export function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError(400, `the request body must be a JSON object describing the ${what}`, { param: null, code: 'invalid_body' });
  }
  const out = { ...(body as Record<string, unknown>) };
  for (const f of OWNERSHIP_FIELDS) delete out[f];
  return out;
}

/** Validates against a TypeBox schema; paths in errors get `prefix` (a nested object of the body). */
export function checkSchema<T extends TSchema>(schema: T, value: unknown, what: string, prefix = ''): Static<T> {
  const result = validator(schema)(value);
  if (!Array.isArray(result)) return result as Static<T>;
  throw invalidFields(what, prefixed(result, prefix));
}

export function prefixed(errors: readonly FieldError[], prefix: string): FieldError[] {
  if (!prefix) return [...errors];
  return errors.map((e) => ({ path: e.path === '(root)' ? prefix : e.path.startsWith('[') ? `${prefix}${e.path}` : `${prefix}.${e.path}`, message: e.message }));
}

/** Where a record of the request lives in the config document: `[document path, body path]`. */
export type PathAlias = readonly [string, string];

/**
 * A ConfigError from ConfigService.update as a 400 whose paths are relative to the request body
 * where the error is inside what the request wrote; other paths stay document paths.
 */
export function fromConfigError(err: ConfigError, what: string, aliases: readonly PathAlias[]): GatewayError {
  return invalidFields(what, err.errors.map((e) => ({ path: relativePath(e.path, aliases), message: e.message })));
}

export function relativePath(path: string, aliases: readonly PathAlias[]): string {
  // The longest matching document prefix wins (a nested budget inside a virtual key's record).
  let best: PathAlias | undefined;
  for (const a of aliases) {
    const [doc] = a;
    const inside = path === doc || path.startsWith(`${doc}.`) || path.startsWith(`${doc}[`);
    if (inside && (!best || doc.length > best[0].length)) best = a;
  }
  if (!best) return path;
  const [doc, body] = best;
  const rest = path.slice(doc.length).replace(/^\./, '');
  if (!rest) return body || '(root)';
  if (!body) return rest;
  return rest.startsWith('[') ? `${body}${rest}` : `${body}.${rest}`;
}

export { ConfigError };
