// Reading `vector_store.config` for the server-backed cache stores: typed fields with errors that
// name the field, and `env.VAR` values read from the environment (as in the other secret-bearing
// sections), so a reference config.json works as it is.
import { readEnvRef } from '../schema/env-ref.ts';

/** A `vector_store.config` that cannot be used; `param` is the field (never its value). */
export class StoreConfigError extends Error {
  readonly param: string;
  constructor(param: string, why: string) {
    super(`vector_store.config.${param}: ${why}`);
    this.param = param;
  }
}

type Raw = Record<string, unknown>;

function envRef(value: string, field: string, env: NodeJS.ProcessEnv): string {
  const ref = readEnvRef(value, env);
  if ('missing' in ref) throw new StoreConfigError(field, `environment variable ${ref.missing} is not set`);
  return ref.value;
}

export function optString(raw: Raw, field: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = raw[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new StoreConfigError(field, `must be a string, got ${typeof v}`);
  return envRef(v, field, env);
}

export function reqString(raw: Raw, field: string, env: NodeJS.ProcessEnv = process.env): string {
  const v = optString(raw, field, env);
  if (v === undefined || v === '') throw new StoreConfigError(field, 'is required');
  return v;
}

/** An integer given as a number, a numeric string or an `env.VAR` holding one. */
export function optInt(raw: Raw, field: string, min: number, max: number, env: NodeJS.ProcessEnv = process.env): number | undefined {
  let v = raw[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') v = /^-?[0-9]+$/.test(envRef(v, field, env)) ? Number(envRef(v, field, env)) : NaN;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new StoreConfigError(field, `must be an integer from ${min} to ${max}`);
  return v;
}

export function optBool(raw: Raw, field: string): boolean | undefined {
  const v = raw[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new StoreConfigError(field, 'must be true or false');
  return v;
}
