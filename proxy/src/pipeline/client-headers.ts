// Client request headers a provider documents as part of its API and that the gateway forwards when
// the call goes to that provider's format: `anthropic-beta` (opt-in beta features, e.g. a larger
// output or a new tool) reaches Anthropic whether the client came through /anthropic or /v1.
// `anthropic-version` is the gateway's own (the translators target one version). OpenAI's
// `openai-organization` / `openai-project` are not forwarded: they pick the account the gateway's
// key bills, which is the operator's choice (network_config.extra_headers), not a client's.
import type { IncomingHttpHeaders } from 'node:http';
import type { UpstreamRequest } from '../providers/adapter.ts';
import type { WireFormat } from '../providers/catalog.ts';

const FORWARDED: Partial<Record<WireFormat, readonly string[]>> = {
  anthropic: ['anthropic-beta'],
};

/** `up` with the client headers its format takes (a header list value joined with commas). */
export function withClientHeaders(up: UpstreamRequest, format: WireFormat, client: IncomingHttpHeaders): UpstreamRequest {
  const names = FORWARDED[format];
  if (!names) return up;
  let headers: Record<string, string> | undefined;
  for (const name of names) {
    const v = client[name];
    const value = Array.isArray(v) ? v.join(',') : v;
    // Only printable header text: what the client sends must not split the upstream request.
    if (!value || !/^[\x20-\x7e]*$/.test(value)) continue;
    headers ??= { ...up.headers };
    headers[name] = value;
  }
  return headers ? { ...up, headers } : up;
}
