// Writing a caller-named key into an object: the one way copies of request data set fields.

/**
 * `record[key] = value` as an own data field whatever the key: an assignment to `__proto__` would
 * set the prototype instead (and silently drop a non-object). Every copy that iterates a caller's
 * keys writes through this (spread and Object.fromEntries already define fields).
 */
export function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
