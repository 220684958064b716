// Field names of the v1beta1 API: the v1alpha1 (config.json) names mapped by one mechanical rule,
// following the Kubernetes API conventions: snake_case -> lowerCamelCase, an acronym in all capitals
// after the first word (`base_url` -> `baseURL`, `key_ids` -> `keyIDs`) and all lowercase as the
// first word (`url`, `ca_cert_pem` -> `caCertPEM`). Names that are already camelCase (`valueFrom`,
// `rateLimit`) stay as they are. EXCEPTIONS holds the few names the rule would get wrong.

/** Words written in capitals when they are not the first word (the conventions' `podIP`, `caBundle`). */
export const ACRONYMS: ReadonlyMap<string, string> = new Map([
  ['id', 'ID'],
  ['ids', 'IDs'],
  ['url', 'URL'],
  ['urls', 'URLs'],
  ['uri', 'URI'],
  ['pem', 'PEM'],
  ['tls', 'TLS'],
  ['http', 'HTTP'],
  ['https', 'HTTPS'],
  ['api', 'API'],
  ['ip', 'IP'],
  ['ips', 'IPs'],
  ['cel', 'CEL'],
  ['json', 'JSON'],
  ['mcp', 'MCP'],
  ['sse', 'SSE'],
  ['ttl', 'TTL'],
  ['ca', 'CA'],
  ['arn', 'ARN'],
  ['kv', 'KV'],
]);

/**
 * v1alpha1 name -> v1beta1 name where the rule above is not what a reader expects. Every entry is
 * checked by test/unit/crd-versions.test.ts to be used by some kind, so the table cannot go stale.
 */
export const EXCEPTIONS: ReadonlyMap<string, string> = new Map<string, string>([]);

/** The v1beta1 name of a v1alpha1 field name. */
export function camelName(name: string): string {
  const exception = EXCEPTIONS.get(name);
  if (exception !== undefined) return exception;
  if (!name.includes('_')) return name;
  const [first, ...rest] = name.split('_').filter((w) => w !== '');
  return first.toLowerCase() + rest.map(word).join('');
}

function word(w: string): string {
  const acronym = ACRONYMS.get(w.toLowerCase());
  if (acronym !== undefined) return acronym;
  return w.charAt(0).toUpperCase() + w.slice(1);
}

/**
 * A schema path (`network_config.extra_headers.*`, `keys[].valueFrom`) with each field renamed;
 * `*` (a map's values) and `[]` (a list's items) are kept.
 */
export function camelPath(path: string): string {
  if (path === '') return path;
  return path
    .split('.')
    .map((seg) => {
      if (seg === '*') return seg;
      const m = /^(.*?)((?:\[\])*)$/.exec(seg) as RegExpExecArray;
      return camelName(m[1]) + m[2];
    })
    .join('.');
}

/** A printer column's jsonPath: the `.spec.` part renamed, anything else (status, metadata) kept. */
export function camelJsonPath(jsonPath: string): string {
  if (!jsonPath.startsWith('.spec.')) return jsonPath;
  return `.spec.${camelPath(jsonPath.slice('.spec.'.length))}`;
}

/**
 * A CEL expression with each field selection (`self.budget_id`, `t.key_id`) renamed. String
 * literals are left alone: they hold values (`'virtual_key'`), not field names.
 */
export function camelCel(expr: string): string {
  let out = '';
  let i = 0;
  while (i < expr.length) {
    const c = expr[i];
    // A string literal, raw (r'..') or not, in single or double quotes: copied as it is.
    if (c === "'" || c === '"') {
      const end = literalEnd(expr, i);
      out += expr.slice(i, end);
      i = end;
      continue;
    }
    if (c === '.' && /[A-Za-z_]/.test(expr[i + 1] ?? '')) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expr.slice(i + 1)) as RegExpExecArray;
      out += `.${camelName(m[0])}`;
      i += 1 + m[0].length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

function literalEnd(expr: string, start: number): number {
  const quote = expr[start];
  const raw = start > 0 && (expr[start - 1] === 'r' || expr[start - 1] === 'R');
  for (let i = start + 1; i < expr.length; i++) {
    if (!raw && expr[i] === '\\') {
      i++;
      continue;
    }
    if (expr[i] === quote) return i + 1;
  }
  throw new Error(`unterminated string literal in CEL: ${expr}`);
}

/**
 * Prose (a description, a rule's message) with the given field names renamed where they appear as
 * words, alone or in a dotted path (`network_config.base_url`). Only `fields` are touched, so
 * values that look like names (`async_job.completed`, `virtual_key`) stay as written.
 */
export function camelProse(text: string, fields: ReadonlySet<string>): string {
  return text.replace(/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/g, (token) => {
    const parts = token.split('.');
    // `spec.client_id` names a field too.
    const path = parts[0] === 'spec' && parts.length > 1 ? parts.slice(1) : parts;
    if (!path.some((p) => fields.has(p) && camelName(p) !== p)) return token;
    // A dotted token is renamed only when every part is a field (a path), not e.g. `file.name_x`.
    if (path.length > 1 && !path.every((p) => fields.has(p))) return token;
    return [...parts.slice(0, parts.length - path.length), ...path.map(camelName)].join('.');
  });
}
