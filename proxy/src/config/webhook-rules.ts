// The webhook rules the schema cannot say: the receiver URL passes the egress check, delivery
// headers are neither reserved nor hop-by-hop, backoffs are ordered, names are unique. Apart from
// schema/webhooks.ts because the URL check is an egress check (upstream/egress.ts), and the schema
// floor imports nothing above it.
import type { FieldError } from '../schema/validate.ts';
import { HOP_BY_HOP_HEADERS, isHopByHopHeader, RESERVED_WEBHOOK_HEADERS, withDefaults, type WebhookEndpoint } from '../schema/webhooks.ts';
import { receiverUrlProblem } from '../upstream/egress.ts';

/** Rules the schema cannot say, for one endpoint; paths relative to `at`. */
export function webhookEndpointErrors(e: WebhookEndpoint, at: string): FieldError[] {
  const errors: FieldError[] = [];
  const p = (f: string) => (at ? `${at}.${f}` : f);
  const urlProblem = receiverUrlProblem(e.url, e.allow_private_network === true);
  if (urlProblem) errors.push({ path: p('url'), message: urlProblem });
  for (const name of Object.keys(e.headers ?? {})) {
    const lower = name.toLowerCase();
    if ((RESERVED_WEBHOOK_HEADERS as readonly string[]).includes(lower)) {
      errors.push({ path: p(`headers.${name}`), message: `cannot override the reserved delivery header ${lower} (reserved: ${RESERVED_WEBHOOK_HEADERS.join(', ')})` });
    } else if (isHopByHopHeader(lower)) {
      errors.push({ path: p(`headers.${name}`), message: `${lower} is a hop-by-hop header and cannot be set on deliveries (refused: ${HOP_BY_HOP_HEADERS.join(', ')}, proxy-*)` });
    } else if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      errors.push({ path: p(`headers.${name}`), message: 'is not a valid HTTP header name' });
    }
  }
  for (const [name, value] of Object.entries(e.headers ?? {})) {
    if (/[\r\n\0]/.test(value)) errors.push({ path: p(`headers.${name}`), message: 'must not contain line breaks or NUL' });
  }
  const s = withDefaults(e);
  if (s.retry_backoff_initial_seconds > s.retry_backoff_max_seconds) {
    errors.push({ path: p('retry_backoff_max_seconds'), message: `must be >= retry_backoff_initial_seconds (${s.retry_backoff_initial_seconds})` });
  }
  return errors;
}

/** config.json `webhooks`: names unique, and each endpoint's own rules. */
export function webhookConfigErrors(list: readonly WebhookEndpoint[] | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (list ?? []).forEach((e, i) => {
    if (seen.has(e.name)) errors.push({ path: `webhooks[${i}].name`, message: `duplicate webhook name '${e.name}'` });
    seen.add(e.name);
    errors.push(...webhookEndpointErrors(e, `webhooks[${i}]`));
  });
  return errors;
}
