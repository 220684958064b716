// User-chosen names become map keys (providers, keys, records, plugins, headers). Two rules keep
// them from reaching JavaScript's object machinery: ids use a small safe character set, and no
// name may be one of Object.prototype's own members (`__proto__`, `constructor`, `toString`, ...),
// so neither an assignment nor a lookup can land on the prototype chain.

/**
 * Record ids (virtual keys, teams, customers, budgets, rate limits, model configs, routing rules)
 * and plugin names: a letter or digit, then letters, digits, `.`, `_`, `:`, `-`; at most 128.
 * UUIDs, Kubernetes object names and `vk-<name>` all fit.
 */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const SAFE_ID_RULE = 'must start with a letter or digit and hold only letters, digits, ".", "_", ":", "-" (at most 128 characters)';

/** Provider names (config keys and path prefixes): lowercase, as the schema has always required. */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const PROVIDER_NAME_RULE = 'must be a lowercase name of letters, digits, "-" and "_" (at most 64 characters), starting with a letter or digit';

/** Provider key names are labels people choose: any letters or digits, spaces and common punctuation. */
export const KEY_NAME = /^[\p{L}\p{N}][\p{L}\p{N} ._:@+/-]{0,255}$/u;
export const KEY_NAME_RULE = 'must start with a letter or digit and hold only letters, digits, spaces and . _ : @ + / - (at most 256 characters)';

/** RFC 9110 token: what a header name may be. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

const RESERVED = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** `__proto__`, `constructor`, `hasOwnProperty`, ...: never a name of anything. */
export function isReservedName(name: string): boolean {
  return RESERVED.has(name);
}

/** Why `name` is not a valid name under `pattern`, or undefined when it is. */
export function nameProblem(name: unknown, pattern: RegExp, rule: string): string | undefined {
  if (typeof name !== 'string') return 'must be a string';
  if (isReservedName(name)) return `'${name}' is a reserved name`;
  if (!pattern.test(name)) return rule;
  return undefined;
}

/** The own property `key` of `record`, never something inherited. */
export function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * Deeper than this, a request, configuration or /api body is refused. Validators, translators and
 * JSON.stringify all recurse, so a body nested thousands deep would overflow the stack somewhere;
 * real ones (tool schemas included) stay far below this.
 */
export const MAX_JSON_DEPTH = 128;

/** Nesting depth of a parsed JSON value, without recursion (the point is not to overflow the stack). */
export function depthOf(root: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    const d = depth + 1;
    if (d > max) max = d;
    if (d > MAX_JSON_DEPTH) return d;
    for (const child of Array.isArray(value) ? value : Object.values(value)) if (child !== null && typeof child === 'object') stack.push([child, d]);
  }
  return max;
}

export interface KeyProblem {
  path: string;
  message: string;
}

/**
 * The first `__proto__` key anywhere in a parsed JSON value (JSON.parse keeps it as an own property,
 * but any later copy by assignment would turn it into a prototype), or a value nested deeper than
 * MAX_JSON_DEPTH. Iterative, so hostile nesting cannot overflow the stack.
 */
export function unsafeJson(value: unknown, root = ''): KeyProblem | undefined {
  const stack: [unknown, string, number][] = [[value, root, 0]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return { path: path || '(root)', message: `nests deeper than ${MAX_JSON_DEPTH} levels` };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}[${i}]`, depth + 1]);
      continue;
    }
    for (const k of Object.keys(v)) {
      const at = path ? `${path}.${k}` : k;
      if (k === '__proto__') return { path: at, message: "'__proto__' is not allowed as a field name" };
      stack.push([(v as Record<string, unknown>)[k], at, depth + 1]);
    }
  }
  return undefined;
}
