// Every `x-bf-*` header the gateway reads or writes, in one place: the code takes the names from
// here, and README.md's table of them is rendered from it (`node scripts/readme-headers.ts`;
// test/unit/bf-headers.test.ts fails when the two differ, or when code uses an x-bf-* name that is
// not listed). Depends on nothing.

export interface BfHeader {
  /** The header name, lower case; a name ending in `-` is a prefix (`x-bf-lh-<name>`). */
  readonly name: string;
  /** How README.md shows it (a prefix with its placeholder). */
  readonly shown: string;
  /** `request`: read from the client; `response`: written to it. */
  readonly direction: 'request' | 'response';
  /** One line: what it does. */
  readonly description: string;
  /** The doc page that says more. */
  readonly doc: string;
}

const header = (name: string, description: string, doc: string, shown = name): BfHeader => ({ name, shown, direction: 'request', description, doc });

export const BF_HEADERS = {
  virtualKey: header('x-bf-vk', 'The virtual key (also read from `Authorization: Bearer`, `x-api-key` or `x-goog-api-key`): its providers, models, budgets and rate limits apply.', 'docs/governance.md'),
  cacheKey: header('x-bf-cache-key', 'Response cache partition; without it (and without `default_cache_key`) the request bypasses the cache.', 'docs/cache.md'),
  cacheTtl: header('x-bf-cache-ttl', 'Lifetime of the entry this request writes: a duration (`30s`, `5m`) or seconds, at most 7 days (more is a 400); invalid values are ignored.', 'docs/cache.md'),
  cacheThreshold: header('x-bf-cache-threshold', 'Stricter semantic similarity (0-1) for this lookup; values below the configured threshold are raised to it.', 'docs/cache.md'),
  cacheType: header('x-bf-cache-type', '`direct` or `semantic`: look up by one path only (no effect in direct-only mode).', 'docs/cache.md'),
  cacheNoStore: header('x-bf-cache-no-store', '`true`: serve a hit, but do not write this answer.', 'docs/cache.md'),
  asyncResultTtl: header('x-bf-async-job-result-ttl', 'Seconds an async job result is kept (1 to 30 days; default `client.async_job_result_ttl`).', 'docs/async.md'),
  asyncWebhook: header('x-bf-async-webhook', 'On an async submit: the `webhooks[]` endpoint told when the job ends.', 'docs/webhooks.md'),
  mcpIncludeClients: header('x-bf-mcp-include-clients', 'Comma-separated MCP clients whose tools this request may use.', 'docs/mcp.md'),
  mcpIncludeTools: header('x-bf-mcp-include-tools', 'Comma-separated MCP tools (`<client>-<tool>`, `<client>-*`) this request may use.', 'docs/mcp.md'),
  logMetadata: header('x-bf-lh-', 'Kept in the request log record\'s `metadata` as `<name>`.', 'docs/request-logs.md', 'x-bf-lh-<name>'),
} as const satisfies Record<string, BfHeader>;

/** README.md's table of the headers, as `scripts/readme-headers.ts` writes it. */
export function bfHeaderTable(): string {
  const rows = Object.values(BF_HEADERS).map((h) => `| \`${h.shown}\` | ${h.direction} | ${h.description} | [${h.doc.replace('docs/', '')}](${h.doc}) |`);
  return ['| header | direction | what it does | more |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
