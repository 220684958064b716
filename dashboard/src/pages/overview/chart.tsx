// A small time-series chart in hand-written SVG (no chart library): stacked bars or lines over time
// buckets, with a y-axis, a few time labels, and an aria-label that says what the chart shows.
import { useEffect, useRef, useState } from 'preact/hooks';
import { formatTime } from '../../lib/format.ts';

export interface Series {
  label: string;
  /** CSS colour (a design token). */
  color: string;
  values: readonly number[];
}

const DEFAULT_W = 640;
const H = 200;
const PAD = { l: 64, r: 12, t: 10, b: 26 };

/** 1, 2, 5 × 10^n at or above `v`, so the axis reads in round numbers. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** Runs of indexes with a value (NaN is a gap: a bucket without requests has no latency). */
function segments(values: readonly number[]): number[][] {
  const out: number[][] = [];
  let run: number[] = [];
  values.forEach((v, i) => {
    if (Number.isNaN(v)) {
      if (run.length) out.push(run);
      run = [];
    } else run.push(i);
  });
  if (run.length) out.push(run);
  // A lone point would draw nothing: repeat it so it shows as a dot-sized line.
  return out.map((r) => (r.length === 1 ? [r[0]!, r[0]!] : r));
}

function timeLabel(iso: string, spanMs: number): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return spanMs > 2 * 86400_000 ? `${d.getMonth() + 1}/${d.getDate()}` : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function TimeChart(props: { title: string; times: readonly string[]; series: readonly Series[]; kind: 'bar' | 'line'; format: (n: number) => string; /** Shorter numbers for the y-axis. */ axisFormat?: (n: number) => string; summary: string }) {
  const fmt = props.axisFormat ?? props.format;
  // Drawn at the width it is shown at, so labels keep their size on a phone instead of shrinking.
  const box = useRef<HTMLDivElement>(null);
  const [W, setW] = useState(DEFAULT_W);
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => setW(Math.max(260, Math.round(el.clientWidth))));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const n = props.times.length;
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const totals = props.times.map((_, i) => (props.kind === 'bar' ? props.series.reduce((a, s) => a + (s.values[i] ?? 0), 0) : Math.max(0, ...props.series.map((s) => (Number.isNaN(s.values[i]) ? 0 : (s.values[i] ?? 0))))));
  const max = niceMax(Math.max(0, ...totals));
  const x = (i: number) => PAD.l + (n <= 1 ? iw / 2 : (i * iw) / (props.kind === 'bar' ? n : n - 1));
  const y = (v: number) => PAD.t + ih - (v / max) * ih;
  const span = n > 1 ? Date.parse(props.times[n - 1]!) - Date.parse(props.times[0]!) : 0;
  // The middle tick only where it reads as a different number (not 0, 1, 1 for a max of 1).
  const ticks = fmt(max / 2) === fmt(max) || fmt(max / 2) === fmt(0) ? [0, max] : [0, max / 2, max];
  const labelEvery = Math.max(1, Math.ceil(n / Math.max(2, Math.floor(iw / 90))));
  const bw = n > 0 ? Math.max(1, iw / n - 1) : 0;

  return (
    <figure class="card chart-card">
      <figcaption>
        <h2>{props.title}</h2>
      </figcaption>
      <div ref={box}>
      <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${props.title}: ${props.summary}`}>
        {ticks.map((t) => (
          <g>
            <line class="grid-line" x1={PAD.l} x2={W - PAD.r} y1={y(t)} y2={y(t)} />
            <text x={PAD.l - 6} y={y(t) + 4} text-anchor="end">
              {fmt(t)}
            </text>
          </g>
        ))}
        <line class="axis" x1={PAD.l} x2={W - PAD.r} y1={PAD.t + ih} y2={PAD.t + ih} />
        {props.kind === 'bar'
          ? props.times.map((t, i) => {
              let base = 0;
              return (
                <g>
                  <title>{`${formatTime(t)}: ${props.series.map((s) => `${s.label} ${props.format(s.values[i] ?? 0)}`).join(', ')}`}</title>
                  {props.series.map((s) => {
                    const v = s.values[i] ?? 0;
                    const top = y(base + v);
                    const h = y(base) - top;
                    base += v;
                    return v > 0 ? <rect x={x(i) + 0.5} y={top} width={bw} height={h} style={{ fill: s.color }} /> : null;
                  })}
                </g>
              );
            })
          : props.series.flatMap((s) => segments(s.values).map((seg) => <polyline fill="none" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" style={{ stroke: s.color }} points={seg.map((i) => `${x(i).toFixed(1)},${y(s.values[i]!).toFixed(1)}`).join(' ')} />))}
        {props.times.map((t, i) =>
          i % labelEvery === 0 ? (
            <text x={props.kind === 'bar' ? x(i) + bw / 2 : x(i)} y={H - 8} text-anchor="middle">
              {timeLabel(t, span)}
            </text>
          ) : null,
        )}
      </svg>
      </div>
      {props.series.length > 1 && (
        <div class="legend" aria-hidden="true">
          {props.series.map((s) => (
            <span>
              <span class="swatch" style={{ background: s.color }} />
              {s.label}
            </span>
          ))}
        </div>
      )}
    </figure>
  );
}
