// The operator's command line: `node operator/src/main.ts --namespace NS [--watch-namespaces a,b]
// [--metrics-port N] [--lease-duration S]`. Credentials come from KUBECONFIG or the pod's service account.
import { parseArgs } from 'node:util';
import type { LogLevel, LogStyle } from '../../proxy/src/contract.ts';
import { MAX_PART_BYTES } from './render/shard.ts';

export interface OperatorCliOptions {
  /** Where the rendered ConfigMaps/Secret and the leader Lease live. */
  namespace: string;
  /** Namespaces whose CRs and Secrets are read; `all` for the whole cluster. */
  watchNamespaces: string[] | 'all';
  metricsPort: number;
  metricsHost: string;
  leaseDurationMs: number;
  leaseName: string;
  resyncMs: number;
  maxPartBytes: number;
  identity: string | undefined;
  /** Read only the Secrets this label selector selects. */
  secretSelector: string | undefined;
  /** Read only the Secrets of these names (each watched by name; RBAC can grant them by name). */
  secretNames: string[] | undefined;
  /** `served`: Ready=True only once every live proxy replica serves the CR; `rendered`: once written. */
  readyWhen: 'served' | 'rendered';
  /** Status writes in flight at once. */
  statusConcurrency: number;
  logLevel: LogLevel;
  logStyle: LogStyle;
}

export const USAGE = `Usage: node operator/src/main.ts --namespace NS [options]
  --namespace NS             write the rendered configuration (and hold the leader lease) in NS
                             (env SKYBRIDGE_NAMESPACE, else POD_NAMESPACE)
  --watch-namespaces A,B     read custom resources and Secrets in these namespaces; '*' = all
                             (default: NS only)
  --metrics-port N           Prometheus /metrics, /healthz, /readyz (default 9090; 0 = any free port)
  --metrics-host ADDR        listen address of the metrics server (default 0.0.0.0)
  --lease-duration S         leader lease duration in seconds (default 6: a killed leader is replaced within ~7 s)
  --lease-name NAME          leader Lease object (default skybridge-operator)
  --resync-period S          reconcile everything this often even without events (default 300)
  --identity ID              this replica's name in the lease (default env POD_NAME, else hostname_pid_random)
  --max-part-bytes N         largest part ConfigMap, UTF-8 bytes (default ${MAX_PART_BYTES})
  --secret-selector SEL      read only the Secrets with these labels, e.g. skybridge.dev/credentials=true
                             (default: every Secret of a watched namespace but Helm's release records)
  --secret-names A,B         read only the Secrets of these names, each watched by name, so RBAC can
                             grant exactly them (resourceNames)
  --ready-when WHEN          served (default): Ready=True only when every live proxy replica reports
                             serving the resource's generation (their Leases); rendered: once written
                             (no reporting proxies, e.g. tests of the operator alone)
  --status-concurrency N     status writes in flight at once (default 32)
  --log-level LEVEL          debug | info | warn | error (default info)
  --log-style STYLE          json | pretty (default json)
  -h, --help                 show this help
Credentials: KUBECONFIG (or ~/.kube/config), else the in-cluster service account.`;

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A DNS subdomain (RFC 1123), what Kubernetes allows as a Secret name. */
const SECRET_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function parseOperatorCli(argv: string[], env: NodeJS.ProcessEnv = process.env): OperatorCliOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      namespace: { type: 'string' },
      'watch-namespaces': { type: 'string' },
      'metrics-port': { type: 'string' },
      'metrics-host': { type: 'string' },
      'lease-duration': { type: 'string' },
      'lease-name': { type: 'string' },
      'resync-period': { type: 'string' },
      identity: { type: 'string' },
      'max-part-bytes': { type: 'string' },
      'secret-selector': { type: 'string' },
      'secret-names': { type: 'string' },
      'ready-when': { type: 'string' },
      'status-concurrency': { type: 'string' },
      'log-level': { type: 'string' },
      'log-style': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const namespace = values.namespace ?? env.SKYBRIDGE_NAMESPACE ?? env.POD_NAMESPACE;
  if (!namespace) throw new Error('--namespace is required');
  if (!NAMESPACE.test(namespace)) throw new Error(`--namespace must be a Kubernetes namespace name, got '${namespace}'`);
  let watchNamespaces: string[] | 'all' = [namespace];
  const watch = values['watch-namespaces'];
  if (watch !== undefined) {
    const list = watch.split(',').map((s) => s.trim()).filter(Boolean);
    if (list.includes('*')) watchNamespaces = 'all';
    else {
      const bad = list.find((n) => !NAMESPACE.test(n));
      if (bad !== undefined || !list.length) throw new Error(`--watch-namespaces must be namespace names separated by commas, or '*', got '${watch}'`);
      watchNamespaces = [...new Set(list)].sort();
    }
  }
  const metricsPort = integer('--metrics-port', values['metrics-port'] ?? '9090', 0, 65535);
  const leaseSeconds = number('--lease-duration', values['lease-duration'] ?? '6', 1, 3600);
  const resyncSeconds = number('--resync-period', values['resync-period'] ?? '300', 1, 86400);
  const maxPartBytes = integer('--max-part-bytes', values['max-part-bytes'] ?? String(MAX_PART_BYTES), 1024, MAX_PART_BYTES);
  const secretSelector = values['secret-selector']?.trim() || undefined;
  let secretNames: string[] | undefined;
  if (values['secret-names'] !== undefined) {
    secretNames = [...new Set(values['secret-names'].split(',').map((s) => s.trim()).filter(Boolean))].sort();
    const bad = secretNames.find((n) => !SECRET_NAME.test(n));
    if (bad !== undefined || !secretNames.length) throw new Error(`--secret-names must be Secret names separated by commas, got '${values['secret-names']}'`);
    if (secretSelector) throw new Error('--secret-names and --secret-selector cannot be combined: choose by name or by label');
  }
  const readyWhen = values['ready-when'] ?? env.SKYBRIDGE_READY_WHEN ?? 'served';
  if (readyWhen !== 'served' && readyWhen !== 'rendered') throw new Error(`--ready-when must be served or rendered, got '${readyWhen}'`);
  const statusConcurrency = integer('--status-concurrency', values['status-concurrency'] ?? '32', 1, 256);
  const logLevel = (values['log-level'] ?? env.LOG_LEVEL ?? 'info') as LogLevel;
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new Error(`--log-level must be debug, info, warn or error, got '${logLevel}'`);
  const logStyle = (values['log-style'] ?? env.LOG_STYLE ?? 'json') as LogStyle;
  if (!['json', 'pretty'].includes(logStyle)) throw new Error(`--log-style must be json or pretty, got '${logStyle}'`);
  return {
    namespace,
    watchNamespaces,
    metricsPort,
    metricsHost: values['metrics-host'] ?? '0.0.0.0',
    leaseDurationMs: Math.round(leaseSeconds * 1000),
    leaseName: values['lease-name'] ?? 'skybridge-operator',
    resyncMs: Math.round(resyncSeconds * 1000),
    maxPartBytes,
    identity: values.identity ?? (env.POD_NAME || undefined),
    secretSelector,
    secretNames,
    readyWhen,
    statusConcurrency,
    logLevel,
    logStyle,
  };
}

function number(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${flag} must be a number ${min}-${max}, got '${raw}'`);
  return n;
}

function integer(flag: string, raw: string, min: number, max: number): number {
  const n = number(flag, raw, min, max);
  if (!Number.isInteger(n)) throw new Error(`${flag} must be an integer, got '${raw}'`);
  return n;
}
