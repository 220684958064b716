// Filters over an offset-paged list: changing a filter goes back to the first page.
import { useState } from 'preact/hooks';

export function usePagedFilters<F extends object>(empty: F) {
  const [filters, setFilters] = useState<F>(empty);
  const [offset, setOffset] = useState(0);
  const set = (k: keyof F, v: F[keyof F]) => {
    setFilters((prev) => ({ ...prev, [k]: v }));
    setOffset(0);
  };
  return { filters, set, offset, setOffset };
}

/** The choices of a list's sort order (the API's `order`). */
export const ORDER_OPTIONS = [
  { value: 'desc', label: 'Descending' },
  { value: 'asc', label: 'Ascending' },
];

/** A datetime-local value (the browser's local time) as ISO 8601, or undefined. */
export const isoOf = (v: string): string | undefined => (v ? new Date(v).toISOString() : undefined);
