// complexity_tier for the routing rules: the request's text embedded by one of the gateway's own
// calls (pipeline/own-calls.ts: no stage runs for it) with the configured provider and model, then
// matched against the tier examples. The classifier (with its embedded examples) is kept while its
// configuration stays the same.
import type { Snapshot } from '../config/snapshot.ts';
import { createComplexityClassifier, type ComplexityClassifier } from '../routing/complexity.ts';
import type { ComplexityTier } from '../schema/complexity.ts';
import { resolveTarget } from './targets.ts';
import { ownEmbeddings } from '../pipeline/own-calls.ts';
import { requireOperation } from '../unified/errors.ts';
import { log } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';

let current: { key: string; classifier: ComplexityClassifier } | undefined;

/** Embeds with the snapshot's provider, through retries and key selection like any request (but no stage). */
function embedder(snap: Snapshot, provider: string, model: string, metrics: Metrics) {
  return async (texts: string[]): Promise<number[][]> => {
    const target = resolveTarget(snap, `${provider}/${model}`);
    requireOperation(target.provider, 'embeddings');
    const parsed = await ownEmbeddings(metrics, 'complexity_embedding', target, texts, AbortSignal.timeout(target.provider.timeoutMs));
    return parsed.data.map((d) => d.embedding as number[]);
  };
}

function classifierFor(snap: Snapshot, metrics: Metrics): ComplexityClassifier | undefined {
  const cfg = snap.config.governance?.complexity_classifier;
  if (!cfg) return undefined;
  const key = JSON.stringify([cfg, snap.config.providers?.[cfg.provider]]);
  if (current?.key !== key) {
    current = {
      key,
      classifier: createComplexityClassifier(cfg, embedder(snap, cfg.provider, cfg.model, metrics), {
        onError: (err) => log.warn('complexity classifier could not embed its examples: complexity_tier stays unknown', { error: err.message }),
      }),
    };
  }
  return current.classifier;
}

/** The request's tier, or undefined (not configured, not ready, nothing to read, below the floor). */
export async function complexityTier(snap: Snapshot, body: unknown, metrics: Metrics): Promise<ComplexityTier | undefined> {
  const classifier = classifierFor(snap, metrics);
  if (!classifier?.ready) return undefined;
  const text = requestText(body);
  if (!text) return undefined;
  try {
    return (await classifier.classify(text))?.tier;
  } catch (err) {
    log.warn('complexity classification failed: complexity_tier is unknown for this request', { error: (err as Error).message });
    return undefined;
  }
}

/** What a person asked: the last user turn of a chat, or the prompt/input of other requests. */
export function requestText(body: unknown): string {
  const b = body as { messages?: unknown; prompt?: unknown; input?: unknown } | null;
  if (!b || typeof b !== 'object') return '';
  if (Array.isArray(b.messages)) {
    for (let i = b.messages.length - 1; i >= 0; i--) {
      const m = b.messages[i] as { role?: string; content?: unknown };
      if (m?.role === 'user') return contentText(m.content);
    }
    return '';
  }
  if (typeof b.prompt === 'string') return b.prompt;
  if (typeof b.input === 'string') return b.input;
  if (Array.isArray(b.input)) return requestText({ messages: b.input.map((x) => (typeof x === 'string' ? { role: 'user', content: x } : x)) });
  return '';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: { type?: string; text?: unknown }) => (typeof p?.text === 'string' ? p.text : ''))
    .filter(Boolean)
    .join('\n');
}
