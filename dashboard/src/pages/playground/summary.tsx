// The facts of one playground answer, from its log record: latency and time to first token,
// tokens, cost (or that the model is unpriced), cache, and the routing decision.
import { formatCost, formatMs, formatNumber } from '../../lib/format.ts';
import { hrefOf } from '../../shell/route.ts';
import type { PlaygroundSummary } from '../../../../proxy/src/api/answers.ts';

interface Cache {
  cache_hit?: boolean;
  hit_type?: string;
}

export function AnswerSummary(props: { summary: PlaygroundSummary }) {
  const { record: r, targets, logged } = props.summary;
  const cache = r.cache_debug as Cache | undefined;
  const fallbacks = targets.slice(1);
  return (
    <section class="card" aria-label="Answer details">
      <h2>Answer details</h2>
      <dl class="kv pg-facts">
        <dt>Status</dt>
        <dd>
          <span class={`badge ${r.status === 'success' ? 'badge-ok' : 'badge-error'}`}>{r.status}</span> {r.status_code ?? ''}
        </dd>
        <dt>Answered by</dt>
        <dd class="mono" data-testid="answered-by">
          {r.provider ? `${r.provider}/${r.model ?? ''}` : '—'}
        </dd>
        <dt>Latency</dt>
        <dd data-testid="latency">{formatMs(r.latency)} total</dd>
        <dt>Time to first token</dt>
        <dd data-testid="ttft">{r.ttft === undefined ? '— (not streamed)' : formatMs(r.ttft)}</dd>
        <dt>Tokens</dt>
        <dd data-testid="tokens">
          {r.total_tokens === undefined ? '— (no usage reported)' : `${formatNumber(r.prompt_tokens)} in · ${formatNumber(r.completion_tokens)} out · ${formatNumber(r.total_tokens)} total`}
          {r.cached_tokens ? ` · ${formatNumber(r.cached_tokens)} cached` : ''}
        </dd>
        <dt>Cost</dt>
        <dd data-testid="cost">{r.cost === undefined ? (r.total_tokens === undefined ? '—' : 'unpriced: charged $0 (no price for this model)') : formatCost(r.cost)}</dd>
        <dt>Cache</dt>
        <dd data-testid="cache">{r.cache_hit ? `hit${cache?.hit_type ? ` (${cache.hit_type})` : ''}` : cache ? 'miss' : 'not cached (no response cache)'}</dd>
        <dt>Routing rule</dt>
        <dd data-testid="routing-rule">{r.routing_rule_name ?? 'none matched'}</dd>
        <dt>Engines</dt>
        <dd>{r.routing_engines_used?.join(', ') || '—'}</dd>
        <dt>Planned targets</dt>
        <dd class="mono" data-testid="targets">
          {targets[0] ?? '—'}
          {fallbacks.length > 0 && <span class="muted"> then {fallbacks.join(', ')}</span>}
        </dd>
        <dt>Fallback used</dt>
        <dd>{r.fallback_index ? `#${r.fallback_index} (${targets[r.fallback_index] ?? '?'})` : 'no (primary answered)'}</dd>
        <dt>Retries</dt>
        <dd>{formatNumber(r.number_of_retries ?? 0)}</dd>
      </dl>
      {logged ? (
        <p>
          <a href={hrefOf('logs', [r.id])}>Open the log record</a>
        </p>
      ) : (
        <p class="muted">Request logging is off on this gateway: no record was kept.</p>
      )}
    </section>
  );
}
