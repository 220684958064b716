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
  /** The conversion webhook (served only with a certificate). */
  conversion: ConversionOptions | undefined;
}

export interface ConversionOptions {
  port: number;
  host: string;
  /** tls.crt and tls.key serve; ca.crt goes into the CRDs' caBundle. */
  certDir: string;
  /** Where the API server reaches the webhook; absent: the CRDs are left as they are. */
  target: { service: { namespace: string; name: string; port: number } } | { url: string } | undefined;
  checkPeriodMs: number;
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
  --conversion-cert-dir DIR  serve the CRDs' conversion webhook over HTTPS with DIR/tls.crt and
                             DIR/tls.key (the chart mounts its Secret); DIR/ca.crt is the CA the
                             CRDs' caBundle is set to. Without it no webhook is served.
  --conversion-port N        port of the conversion webhook (default 9443)
  --conversion-host ADDR     listen address of the conversion webhook (default 0.0.0.0)
  --conversion-service NS/NAME[:PORT]
                             set every CRD's conversion webhook to this Service (port default 443)
  --conversion-url URL       or to this URL (an operator outside the cluster; tests)
  --conversion-check-period S
                             check the CRDs' conversion settings this often (default 60)
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
      'conversion-cert-dir': { type: 'string' },
      'conversion-port': { type: 'string' },
      'conversion-host': { type: 'string' },
      'conversion-service': { type: 'string' },
      'conversion-url': { type: 'string' },
      'conversion-check-period': { type: 'string' },
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
  const conversion = conversionOptions(values);
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
    conversion,
  };
}

function conversionOptions(values: Record<string, string | boolean | undefined>): ConversionOptions | undefined {
  const str = (k: string) => values[k] as string | undefined;
  const certDir = str('conversion-cert-dir');
  const service = str('conversion-service');
  const url = str('conversion-url');
  if (!certDir) {
    const stray = ['conversion-service', 'conversion-url', 'conversion-port', 'conversion-host', 'conversion-check-period'].find((k) => str(k) !== undefined);
    if (stray) throw new Error(`--${stray} needs --conversion-cert-dir (the webhook's certificate)`);
    return undefined;
  }
  if (service !== undefined && url !== undefined) throw new Error('--conversion-service and --conversion-url cannot be combined: the API server reaches the webhook one way');
  let target: ConversionOptions['target'];
  if (service !== undefined) {
    const m = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(?::(\d+))?$/.exec(service);
    if (!m) throw new Error(`--conversion-service must be NAMESPACE/NAME[:PORT], got '${service}'`);
    target = { service: { namespace: m[1], name: m[3], port: m[5] ? integer('--conversion-service port', m[5], 1, 65535) : 443 } };
  } else if (url !== undefined) {
    if (!/^https:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(url)) throw new Error(`--conversion-url must be an https:// URL without query or fragment (the API server calls webhooks over TLS), got '${url}'`);
    target = { url };
  }
  return {
    certDir,
    port: integer('--conversion-port', str('conversion-port') ?? '9443', 0, 65535),
    host: str('conversion-host') ?? '0.0.0.0',
    target,
    checkPeriodMs: Math.round(number('--conversion-check-period', str('conversion-check-period') ?? '60', 1, 86400) * 1000),
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
