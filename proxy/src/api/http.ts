// Small helpers shared by the /api routers.
import type { Request, Response } from 'express';
import { sendJson } from '../http/respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { nameProblem } from '../schema/names.ts';

export function reply(res: Response, status: number, body: unknown): void {
  sendJson(res, status, body);
}

export function queryParam(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  if (Array.isArray(v)) return typeof v[0] === 'string' ? v[0] : undefined;
  return typeof v === 'string' ? v : undefined;
}

export const queryFlag = (req: Request, name: string): boolean => queryParam(req, name) === 'true';

export function pathParam(req: Request, name: string): string {
  const v = Object.hasOwn(req.params, name) ? (req.params as Record<string, string | string[] | undefined>)[name] : undefined;
  return Array.isArray(v) ? v.join('/') : (v ?? '');
}

/** A path segment naming a record: 400 naming the parameter unless it is a safe name (schema/names.ts). */
export function namedParam(req: Request, name: string, pattern: RegExp, rule: string): string {
  const v = pathParam(req, name);
  const problem = nameProblem(v, pattern, rule);
  if (problem) throw new GatewayError(400, `invalid ${name} '${v.slice(0, 128)}' in the path: ${problem}`, { param: name, code: 'invalid_field' });
  return v;
}

/**
 * JSON merge patch (RFC 7396) of one level: a field in `patch` replaces the stored one, `null`
 * removes it (except the fields in `keepNull`, where null is a value of its own).
 */
export function mergePatch<T extends Record<string, unknown>>(stored: T, patch: Record<string, unknown>, keepNull: readonly string[] = []): T {
  const out: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null && !keepNull.includes(k)) delete out[k];
    // defineProperty, not assignment: a `__proto__` key stays a plain field (and is refused by validation).
    else Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out as T;
}

/** A copy without the fields the reference gateway's answers carry but a write does not store. */
export function without(body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out = { ...body };
  for (const f of fields) delete out[f];
  return out;
}
