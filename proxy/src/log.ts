// A small structured logger: JSON lines for machines, one readable line for people. Secrets never
// reach it: callers log names and ids, not key values.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogStyle = 'json' | 'pretty';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold = ORDER.info;
let style: LogStyle = 'json';

export function configureLog(opts: { level?: LogLevel; style?: LogStyle }): void {
  if (opts.level) threshold = ORDER[opts.level];
  if (opts.style) style = opts.style;
}

// A log pipe whose reader went away (EPIPE) is given up, not written again: each write would fail
// again, and with no listener the failure is an uncaught exception the process guard logs, to the
// same pipe, in a loop that burns a core.
const broken = new Set<NodeJS.WriteStream>();
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => broken.add(stream));

// Writes never wait for the reader: node writes a pipe (a container's log pipe) asynchronously, so
// a reader that falls behind makes lines queue in the stream's memory instead of stalling the event
// loop (test/integration/log-stall.test.ts). That queue is bounded here: past MAX_QUEUED bytes lines
// are dropped, counted, and reported by a line of their own once the reader caught up.
const MAX_QUEUED = 8 * 1024 * 1024;
const dropped = new Map<NodeJS.WriteStream, number>();

function emit(out: NodeJS.WriteStream, line: string): void {
  if (broken.has(out)) return;
  if (out.writableLength > MAX_QUEUED) {
    dropped.set(out, (dropped.get(out) ?? 0) + 1);
    return;
  }
  const lost = dropped.get(out);
  if (lost !== undefined && out.writableLength < MAX_QUEUED / 2) {
    dropped.delete(out);
    out.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'log lines dropped', count: lost, why: 'the log reader fell behind' })}\n`);
  }
  out.write(line);
}

function write(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  const time = new Date().toISOString();
  let line: string;
  if (style === 'json') {
    line = JSON.stringify({ time, level, msg, ...fields });
  } else {
    const extra = fields && Object.keys(fields).length ? ' ' + JSON.stringify(fields) : '';
    line = `${time} ${level.toUpperCase().padEnd(5)} ${msg}${extra}`;
  }
  emit(level === 'error' || level === 'warn' ? process.stderr : process.stdout, line + '\n');
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write('error', msg, fields),
  enabled: (level: LogLevel) => ORDER[level] >= threshold,
};
