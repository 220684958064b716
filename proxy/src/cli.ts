// Command line compatible with the reference gateway, so its users can switch without new habits.
import { parseArgs } from 'node:util';
import { availableParallelism } from 'node:os';
import type { LogLevel, LogStyle } from './log.ts';
import { DEFAULT_LIMITS, type ListenerLimits } from './http/limits.ts';
import type { TlsFiles } from './http/tls.ts';

export interface CliOptions {
  appDir: string | undefined;
  port: number;
  host: string;
  logLevel: LogLevel;
  logStyle: LogStyle;
  /** Worker processes sharing the port (node:cluster); 1 = serve in this process. */
  workers: number;
  /** Follow the operator's rendered configuration in this namespace instead of config.json. */
  kubeNamespace: string | undefined;
  /** Per-connection bounds of the listener (timeouts, header size, HTTP/2 streams). */
  limits: ListenerLimits;
  /** How long a SIGTERM waits for requests and streams in flight before the process exits. */
  shutdownGraceMs: number;
  /** Serve the dashboard (`/`, `/assets/*`, `/ws`); off with --no-dashboard or SKYBRIDGE_DASHBOARD=off. */
  dashboard: boolean;
  /** A second listener for /api, /metrics and the dashboard; the main port then serves only inference, /health and /ready. */
  adminPort: number | undefined;
  /** Serve TLS on every listener with this certificate chain and key (PEM files, re-read when they change). */
  tls: TlsFiles | undefined;
  /** Quiet this long after traffic, give back the heap it grew (memory-trim.ts); undefined: off. */
  memoryTrimMs?: number;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

export const USAGE = `Usage: skybridge [options]
  --app-dir DIR        read DIR/config.json (watched: valid edits apply live)
  --port N             listen port (default 8080, env PORT)
  --host ADDR          listen address (default 0.0.0.0, env HOST)
  --log-level LEVEL    debug | info | warn | error (default info)
  --log-style STYLE    json | pretty (default json)
  --workers N|auto     worker processes sharing the port (default 1, env WORKERS; auto = one per core)
  --kube-namespace NS  follow the configuration the Skybridge operator renders in namespace NS
                       (env SKYBRIDGE_KUBE_NAMESPACE; KUBECONFIG or in-cluster credentials)
  --headers-timeout S  seconds a client may take to send request headers (default ${DEFAULT_LIMITS.headersTimeoutMs / 1000})
  --request-timeout S  seconds a client may take to send a whole request, body included, on
                       HTTP/1.1 and HTTP/2 alike (default ${DEFAULT_LIMITS.requestTimeoutMs / 1000}; answering may take longer)
  --max-header-size B  largest request header block in bytes (default ${DEFAULT_LIMITS.maxHeaderBytes})
  --h2-max-streams N   concurrent HTTP/2 streams per connection (default ${DEFAULT_LIMITS.h2MaxStreams})
  --shutdown-grace S   on SIGTERM, seconds to let requests and streams in flight finish (default ${DEFAULT_SHUTDOWN_GRACE_MS / 1000}, env SHUTDOWN_GRACE)
  --no-dashboard       do not serve the web dashboard (/, /assets/*, /ws) (env SKYBRIDGE_DASHBOARD=off)
  --admin-port N       serve /api, /metrics and the dashboard (/, /assets/*, /ws) on this port (same
                       --host) instead of --port, which then serves only inference, /health and /ready
                       (env SKYBRIDGE_ADMIN_PORT)
  --tls-cert FILE      serve HTTPS (and wss:) with this PEM certificate chain; needs --tls-key
                       (env SKYBRIDGE_TLS_CERT). Both files are re-read when they change.
  --tls-key FILE       the PEM private key of --tls-cert (env SKYBRIDGE_TLS_KEY)
  --memory-trim S      after traffic, once nothing has arrived or been in flight for S seconds, give
                       back the memory the traffic grew (without it: once after the first
                       traffic and 30 s quiet, and 1 s after a burst that grew the process
                       by 64 MB resident; each trim makes the traffic after it cost more CPU
                       for a while; env SKYBRIDGE_MEMORY_TRIM)
  --version            print the version and exit
  -h, --help           show this help
The reference gateway's single-dash spellings (-port, -app-dir, -host, -log-level, ...) work too.
Without --app-dir, providers come from OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ...
(and <PROVIDER>_BASE_URL to point one elsewhere).`;

/**
 * The reference gateway (Go's flag package) spells long flags with one dash: `-port 8080`,
 * `-app-dir=/data`. Those become `--port 8080`, `--app-dir=/data` for parseArgs; a single-letter
 * flag (`-h`) and a value after a flag are left alone.
 */
export function doubleDashed(argv: readonly string[], longNames: readonly string[]): string[] {
  const known = new Set(longNames);
  const out: string[] = [];
  let takesValue = false;
  for (const arg of argv) {
    if (!takesValue && /^-[a-z][a-z0-9-]+(=.*)?$/.test(arg) && known.has(arg.slice(1).split('=')[0]!)) out.push(`-${arg}`);
    else out.push(arg);
    // The next argument is this flag's value, even when it starts with a dash.
    takesValue = !takesValue && /^--?[a-z][a-z0-9-]+$/.test(arg) && VALUE_FLAGS.has(arg.replace(/^--?/, ''));
  }
  return out;
}

const VALUE_FLAGS = new Set(['app-dir', 'port', 'host', 'log-level', 'log-style', 'workers', 'kube-namespace', 'headers-timeout', 'request-timeout', 'max-header-size', 'h2-max-streams', 'shutdown-grace', 'admin-port', 'tls-cert', 'tls-key', 'memory-trim']);
const LONG_FLAGS = [...VALUE_FLAGS, 'no-dashboard', 'help', 'version'];

export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions | 'help' | 'version' {
  const { values } = parseArgs({
    args: doubleDashed(argv, LONG_FLAGS),
    options: {
      'app-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'log-level': { type: 'string' },
      'log-style': { type: 'string' },
      workers: { type: 'string' },
      'kube-namespace': { type: 'string' },
      'headers-timeout': { type: 'string' },
      'request-timeout': { type: 'string' },
      'max-header-size': { type: 'string' },
      'h2-max-streams': { type: 'string' },
      'shutdown-grace': { type: 'string' },
      'no-dashboard': { type: 'boolean' },
      'admin-port': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'memory-trim': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  if (values.version) return 'version';
  const port = Number(values.port ?? env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer 0-65535, got '${values.port}'`);
  const logLevel = (values['log-level'] ?? env.LOG_LEVEL ?? 'info') as LogLevel;
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new Error(`--log-level must be debug, info, warn or error, got '${logLevel}'`);
  const logStyle = (values['log-style'] ?? env.LOG_STYLE ?? 'json') as LogStyle;
  if (!['json', 'pretty'].includes(logStyle)) throw new Error(`--log-style must be json or pretty, got '${logStyle}'`);
  const workersArg = values.workers ?? env.WORKERS ?? '1';
  const workers = workersArg === 'auto' ? availableParallelism() : Number(workersArg);
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) throw new Error(`--workers must be an integer 1-256 or 'auto', got '${workersArg}'`);
  const kubeNamespace = values['kube-namespace'] ?? (env.SKYBRIDGE_KUBE_NAMESPACE || undefined);
  if (kubeNamespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(kubeNamespace)) throw new Error(`--kube-namespace must be a Kubernetes namespace name, got '${kubeNamespace}'`);
  const limits: ListenerLimits = {
    ...DEFAULT_LIMITS,
    headersTimeoutMs: seconds('--headers-timeout', values['headers-timeout'], DEFAULT_LIMITS.headersTimeoutMs),
    requestTimeoutMs: seconds('--request-timeout', values['request-timeout'], DEFAULT_LIMITS.requestTimeoutMs),
    maxHeaderBytes: integer('--max-header-size', values['max-header-size'], DEFAULT_LIMITS.maxHeaderBytes, 1024, 1024 * 1024),
    h2MaxStreams: integer('--h2-max-streams', values['h2-max-streams'], DEFAULT_LIMITS.h2MaxStreams, 1, 10_000),
  };
  // node:http refuses a header timeout longer than the whole-request timeout.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new Error('--headers-timeout must not exceed --request-timeout');
  const shutdownGraceMs = seconds('--shutdown-grace', values['shutdown-grace'] ?? env.SHUTDOWN_GRACE, DEFAULT_SHUTDOWN_GRACE_MS);
  const dashboard = !values['no-dashboard'] && !['off', 'false', '0'].includes((env.SKYBRIDGE_DASHBOARD ?? '').toLowerCase());
  const adminArg = values['admin-port'] ?? (env.SKYBRIDGE_ADMIN_PORT || undefined);
  const adminPort = adminArg === undefined ? undefined : Number(adminArg);
  if (adminPort !== undefined && (!/^[0-9]{1,5}$/.test(adminArg ?? '') || adminPort > 65535)) throw new Error(`--admin-port must be an integer 0-65535, got '${adminArg}'`);
  // Port 0 picks a free port for each listener, so only a fixed port can collide.
  if (adminPort !== undefined && adminPort !== 0 && adminPort === port) throw new Error(`--admin-port must differ from --port (both ${port})`);
  const cert = values['tls-cert'] ?? (env.SKYBRIDGE_TLS_CERT || undefined);
  const key = values['tls-key'] ?? (env.SKYBRIDGE_TLS_KEY || undefined);
  // One without the other would quietly serve plain HTTP where TLS was asked for.
  if ((cert === undefined) !== (key === undefined)) throw new Error(`--tls-cert and --tls-key go together: ${cert === undefined ? '--tls-key' : '--tls-cert'} was given alone`);
  const tls = cert !== undefined && key !== undefined ? { cert, key } : undefined;
  const trimArg = values['memory-trim'] ?? (env.SKYBRIDGE_MEMORY_TRIM || undefined);
  const memoryTrimMs = trimArg === undefined ? undefined : seconds('--memory-trim', trimArg, 0);
  return { appDir: values['app-dir'] ?? env.APP_DIR, port, host: values.host ?? env.HOST ?? '0.0.0.0', logLevel, logStyle, workers, kubeNamespace, limits, shutdownGraceMs, dashboard, adminPort, tls, ...(memoryTrimMs !== undefined && { memoryTrimMs }) };
}

/** A positive number of seconds (fractions allowed, for tests), in milliseconds. */
function seconds(flag: string, value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 86_400) throw new Error(`${flag} must be a number of seconds between 0 and 86400, got '${value}'`);
  return Math.round(n * 1000);
}

function integer(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} must be an integer ${min}-${max}, got '${value}'`);
  return n;
}
