// Hit rates from GET /api/cache/stats (this gateway process's counters since it started).
import { formatNumber } from '../../lib/format.ts';
import type { CacheStats } from '../../../../proxy/src/api/answers.ts';

function Stat(props: { label: string; value: string; testid?: string }) {
  return (
    <div class="stat">
      <span class="stat-label">{props.label}</span>
      <span class="stat-value" data-testid={props.testid}>
        {props.value}
      </span>
    </div>
  );
}

export function CacheStatsView(props: { stats: CacheStats }) {
  const s = props.stats;
  const bypassed = Object.values(s.bypassed).reduce((a, b) => a + b, 0);
  const errors = Object.values(s.store_errors).reduce((a, b) => a + b, 0);
  return (
    <>
      <div class="stats rc-stats">
        <Stat label="Hit rate" value={s.hit_rate === null ? '—' : `${(s.hit_rate * 100).toFixed(1)}%`} testid="cache-hit-rate" />
        <Stat label="Direct hits" value={formatNumber(s.hits.direct)} testid="cache-hits-direct" />
        <Stat label="Semantic hits" value={formatNumber(s.hits.semantic)} testid="cache-hits-semantic" />
        <Stat label="Misses" value={formatNumber(s.misses.total)} testid="cache-misses" />
        <Stat label="Bypassed" value={formatNumber(bypassed)} />
        <Stat label="Entries written" value={formatNumber(s.writes)} />
        {errors > 0 && <Stat label="Store errors" value={formatNumber(errors)} />}
      </div>
      {bypassed > 0 && (
        <p class="muted">
          Bypassed by reason: {Object.entries(s.bypassed).map(([k, v]) => `${k.replace(/_/g, ' ')} ${formatNumber(v)}`).join(', ')}.
        </p>
      )}
      <p class="muted">Counted by this gateway process since it started (each replica counts its own; /metrics has the same series).</p>
    </>
  );
}
