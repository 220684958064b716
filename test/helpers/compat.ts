// Compatibility cells: a test declares the cell of docs/compatibility.md it backs by putting
// `compat(prefix, operation, upstream)` in its name (or its describe's name), e.g.
//   test(`messages.stream ${compat('/anthropic', 'messages.stream', format)}`, ...)
// names the test "... [compat /anthropic messages.stream -> gemini]". The docs generator
// (scripts/compat-table.ts) reads these tags from test results, the unit test
// test/unit/compat-table.test.ts finds the compat() calls statically (test/helpers/compat-scan.ts).
// A cell means: the provider's official SDK (or, for Anthropic's legacy `complete`, the HTTP calls it
// made) pointed at that gateway prefix, doing that operation, against a provider of that wire format.

/** Upstream wire formats, in the order of the table's columns. */
export const UPSTREAMS = ['openai', 'anthropic', 'gemini', 'bedrock', 'cohere', 'azure', 'vertex'] as const;
export type Upstream = (typeof UPSTREAMS)[number];

type Framework = '/litellm' | '/langchain' | '/pydanticai';
type NativePrefix = '/anthropic' | '/genai' | '/bedrock' | '/cohere';

/** The gateway path a client's base URL (or endpoint) names. */
export type CompatPrefix =
  | '/v1'
  | '/openai'
  | '/openai/v1'
  | '/openai/deployments'
  | NativePrefix
  | `${Framework}/v1`
  | `${Framework}${NativePrefix}`
  | `/${string}_passthrough`;

/** Table order of the prefixes; any other (passthrough) prefix follows, alphabetically. */
export const PREFIX_ORDER: readonly string[] = [
  '/v1', '/openai', '/openai/v1', '/openai/deployments', '/anthropic', '/genai', '/bedrock', '/cohere',
  ...['/litellm', '/langchain', '/pydanticai'].flatMap((f) => [`${f}/v1`, `${f}/anthropic`, `${f}/genai`, `${f}/bedrock`, `${f}/cohere`]),
];

export interface Cell {
  prefix: string;
  operation: string;
  upstream: Upstream;
}

const OPERATION_RE = /^[A-Za-z][\w.-]*$/;

/** The upstream format of `openai`, or of a `provider/model` id such as `gemini/gemini-2.5-flash`. */
export function upstreamOf(value: string): Upstream {
  const format = value.split('/')[0];
  if (!(UPSTREAMS as readonly string[]).includes(format)) throw new Error(`compat: '${value}' names no upstream format (${UPSTREAMS.join(', ')})`);
  return format as Upstream;
}

/** Checks a cell's parts; the same rules for the helper and for the static scan. */
export function toCell(prefix: string, operation: string, upstream: string): Cell {
  const known = PREFIX_ORDER.includes(prefix) || /^\/[a-z0-9-]+_passthrough$/.test(prefix);
  if (!known) throw new Error(`compat: unknown prefix '${prefix}'`);
  if (!OPERATION_RE.test(operation)) throw new Error(`compat: operation '${operation}' must be one word of letters, digits, '.', '_' or '-'`);
  return { prefix, operation, upstream: upstreamOf(upstream) };
}

export function tagOf(cell: Cell): string {
  return `[compat ${cell.prefix} ${cell.operation} -> ${cell.upstream}]`;
}

/**
 * The tag naming one cell, for a test or describe name. `upstream` is a format or a
 * `provider/model` id (its provider must be one of UPSTREAMS). Its arguments must be literals, or
 * variables of `for (const x of LIST)` loops over literal lists, so the cell can be found statically.
 * Unknown prefixes and formats throw (plain `string` is accepted for loop variables over untyped lists).
 */
export function compat(prefix: CompatPrefix | (string & Record<never, never>), operation: string, upstream: Upstream | (string & Record<never, never>)): string {
  return tagOf(toCell(prefix, operation, upstream));
}

const TAG_RE = /\[compat (\S+) (\S+) -> (\S+)\]/g;

/** Every cell tagged in a test name. */
export function tagsIn(name: string): Cell[] {
  return [...name.matchAll(TAG_RE)].map((m) => toCell(m[1], m[2], m[3]));
}

export const cellKey = (c: Cell): string => `${c.prefix} ${c.operation} -> ${c.upstream}`;
