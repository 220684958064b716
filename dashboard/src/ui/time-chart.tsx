// A time-series chart drawn by uPlot (a small canvas library built for time series): lines that
// stay continuous across buckets without a value, dated axes when a range crosses midnight, and a
// legend that reads the exact values under the cursor (its tooltip). The chart is keyboard
// navigable: focus it and the arrow keys move the cursor bucket by bucket (Home/End to the ends);
// its figure caption says in words what it shows, for screen readers.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { axisLabels, fullTime } from '../lib/time-axis.ts';

export interface ChartSeries {
  label: string;
  /** A colour from PALETTE (canvas does not read CSS variables). */
  color: string;
  /** One value per time; null is "no value" (a bucket without requests has no latency). */
  values: readonly (number | null)[];
}

/** Distinct on white at 3:1 or more, and apart for the common colour-vision deficiencies. */
export const PALETTE = ['#1d4ed8', '#b42318', '#146c2e', '#8a4b05', '#6d28d9', '#0e7490', '#be185d', '#4f596b', '#7c5e10'];

const HEIGHT = 220;

export function TimeChart(props: {
  title: string;
  /** Bucket starts, ms since the epoch. */
  times: readonly number[];
  series: readonly ChartSeries[];
  format: (n: number) => string;
  /** Shorter numbers for the y-axis (defaults to format). */
  axisFormat?: (n: number) => string;
  /** What the chart shows, in words (the figure's caption, read by screen readers). */
  summary: string;
  /** Filled area under a single series (counts). */
  fill?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const cursorAt = useRef(-1);
  // What the keyboard cursor reads, announced (the canvas itself says nothing to a screen reader).
  const [reading, setReading] = useState('');
  const shape = `${props.series.map((s) => `${s.label}|${s.color}`).join(',')}|${props.fill ?? false}`;

  const data = (): uPlot.AlignedData => [props.times.map((t) => t / 1000), ...props.series.map((s) => s.values.map((v) => (v === null ? null : v)))] as uPlot.AlignedData;

  // Built once per set of series; new numbers (a live update) only replace the data.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const fmt = props.format;
    const axisFmt = props.axisFormat ?? fmt;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: HEIGHT,
      scales: { x: { time: true } },
      series: [
        { label: 'Time', value: (_u, v) => (v === null || v === undefined ? '—' : fullTime(v * 1000)) },
        ...props.series.map(
          (s): uPlot.Series => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            // Empty buckets are drawn through: a line, not scattered dots.
            spanGaps: true,
            points: { show: false },
            ...(props.fill && props.series.length === 1 ? { fill: `${s.color}22` } : {}),
            value: (_u, v) => (v === null || v === undefined ? '—' : fmt(v)),
          }),
        ),
      ],
      axes: [
        {
          stroke: '#4f596b',
          grid: { stroke: '#e5e9f0' },
          values: (u, splits) => {
            const xs = u.data[0];
            return axisLabels(
              splits.map((s) => s * 1000),
              (xs[0] ?? 0) * 1000,
              (xs[xs.length - 1] ?? 0) * 1000,
            );
          },
          size: 44,
        },
        { stroke: '#4f596b', grid: { stroke: '#e5e9f0' }, values: (_u, splits) => splits.map((v) => axisFmt(v)), size: 64 },
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    const u = new uPlot(opts, data(), el);
    plot.current = u;
    // Drawn at the width it is shown at, so labels keep their size on a phone.
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = undefined;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data());
  }, [props.times, props.series]);

  const onKey = (e: KeyboardEvent) => {
    const u = plot.current;
    const n = props.times.length;
    if (!u || n === 0) return;
    const moves: Record<string, number> = { ArrowLeft: -1, ArrowRight: 1, Home: -n, End: n };
    const step = moves[e.key];
    if (step === undefined) return;
    e.preventDefault();
    const at = Math.max(0, Math.min(n - 1, (cursorAt.current < 0 ? (step > 0 ? -1 : n) : cursorAt.current) + step));
    cursorAt.current = at;
    const x = u.data[0][at]!;
    const y = props.series.map((s) => s.values[at]).find((v) => v !== null && v !== undefined) ?? 0;
    u.setCursor({ left: u.valToPos(x, 'x'), top: u.valToPos(y, 'y') });
    const values = props.series.map((s) => `${s.label} ${s.values[at] === null || s.values[at] === undefined ? 'no value' : props.format(s.values[at]!)}`);
    setReading(`${fullTime(props.times[at]!)}: ${values.join(', ')}`);
  };

  return (
    <figure class="card chart-card" aria-label={props.title}>
      <h2>{props.title}</h2>
      <div ref={box} class="uplot-box" tabIndex={0} role="group" aria-label={`${props.title} chart; arrow keys read the values bucket by bucket`} onKeyDown={onKey} />
      <figcaption class="sr-only">{props.summary}</figcaption>
      <p class="sr-only" aria-live="polite">
        {reading}
      </p>
    </figure>
  );
}
