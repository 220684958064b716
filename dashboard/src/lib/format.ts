// Pure formatting helpers shared by the pages.
export const formatNumber = (n: number | undefined | null): string => (n === undefined || n === null ? '—' : n.toLocaleString('en-US'));
export const formatCost = (n: number | undefined | null): string => (n === undefined || n === null ? '—' : `$${n < 0.01 && n > 0 ? n.toFixed(6) : n.toFixed(2)}`);
export const formatMs = (n: number | undefined | null): string => (n === undefined || n === null ? '—' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(2)} s`);
export function formatTime(t: string | number | undefined | null): string {
  if (t === undefined || t === null || t === '') return '—';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString().replace('T', ' ').slice(0, 19);
}
