// The embedding of a request's text for semantic lookups: one of the gateway's own calls
// (pipeline/own-calls.ts) to the configured provider and model, outside the stage list, so the
// call is neither governed, logged nor cached itself, and the cache cannot call itself. The
// provider's keys come from the provider configuration, as the spec says.
import type { Snapshot } from '../config/snapshot.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { ownEmbeddings } from '../pipeline/own-calls.ts';
import { GatewayError } from '../unified/errors.ts';

export interface Embedded {
  vector: Float32Array;
  inputTokens: number;
}

export async function embedText(snapshot: Snapshot, metrics: Metrics, provider: string, model: string, text: string, signal: AbortSignal): Promise<Embedded> {
  const runtime = snapshot.providers.get(provider);
  if (!runtime) throw new GatewayError(500, `cache embedding provider '${provider}' is not configured`, { type: 'internal_error' });
  const out = await ownEmbeddings(metrics, 'cache_embedding', { provider: runtime, model }, text, signal);
  const first = out.data?.[0]?.embedding;
  const vector = typeof first === 'string' ? fromBase64(first) : Array.isArray(first) ? Float32Array.from(first) : undefined;
  if (!vector || vector.length === 0) throw new GatewayError(502, `cache embedding from '${provider}' has no vector`, { provider });
  const usage = (out as { usage?: { prompt_tokens?: number } }).usage;
  return { vector, inputTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : 0 };
}

function fromBase64(b64: string): Float32Array {
  const bytes = Buffer.from(b64, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength - (bytes.byteLength % 4)));
}
