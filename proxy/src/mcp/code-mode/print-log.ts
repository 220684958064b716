// Code-mode `print` lines go to the gateway log, but code is written by callers (and their models):
// one loop of prints must not flood the log or drown other callers' lines. Each caller (its virtual
// key, or "anonymous") may log PRINT_LINES lines per PRINT_WINDOW_MS; the rest is counted and
// reported in one line when the caller's next window opens.
import { log } from '../../log.ts';

export const PRINT_LINES = 50;
export const PRINT_WINDOW_MS = 10_000;
/** Callers tracked at most; past it the oldest window is forgotten. */
const MAX_CALLERS = 10_000;

interface Window {
  start: number;
  lines: number;
  dropped: number;
}

const windows = new Map<string, Window>();

/** Logs one print line of `caller`, unless its window is full. */
export function logPrint(caller: string, line: string, now = Date.now()): void {
  let w = windows.get(caller);
  if (!w || now - w.start >= PRINT_WINDOW_MS) {
    if (w?.dropped) log.warn('code mode print lines dropped: the caller printed more than the log takes', { caller, dropped: w.dropped, limit: `${PRINT_LINES} lines per ${PRINT_WINDOW_MS / 1000} s` });
    windows.delete(caller);
    if (windows.size >= MAX_CALLERS) windows.delete(windows.keys().next().value!);
    w = { start: now, lines: 0, dropped: 0 };
    windows.set(caller, w);
  }
  if (w.lines >= PRINT_LINES) {
    w.dropped++;
    return;
  }
  w.lines++;
  // Per request (a script's own output): debug, with the other per-request lines.
  log.debug('code mode print', { caller, line: line.slice(0, 2000) });
}
