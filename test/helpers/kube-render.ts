// The objects the operator writes for the proxies (docs/kubernetes.md, the operator <-> proxy
// contract), built here on their own from the contract's words, so tests check the proxy against
// the contract rather than against the proxy's own code: part ConfigMaps, the Secret, and the index
// ConfigMap (applied last: the commit point).
import { createHash } from 'node:crypto';

export const LABELS = { 'app.kubernetes.io/managed-by': 'skybridge-operator', 'skybridge.dev/config': 'true' };

export interface KubeObject {
  apiVersion: 'v1';
  kind: 'ConfigMap' | 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  type?: string;
  data: Record<string, string>;
}

export interface RenderedConfig {
  parts: KubeObject[];
  secret: KubeObject;
  index: KubeObject;
  indexDocument: Record<string, unknown>;
  /** In the order the operator applies them. */
  all: KubeObject[];
}

export interface RenderOptions {
  namespace: string;
  /** Split the document text into parts of at most this many characters (ASCII documents). */
  partChars?: number;
  managed?: Record<string, string[]>;
  sources?: Record<string, string>;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** `secrets`: Secret data key -> plain value (the document says `env.<key>`). */
export function renderConfig(document: unknown, secrets: Record<string, string>, opts: RenderOptions): RenderedConfig {
  const text = JSON.stringify(document, null, 2);
  const size = opts.partChars ?? 900 * 1024;
  const texts: string[] = [];
  for (let i = 0; i < text.length; i += size) texts.push(text.slice(i, i + size));
  const meta = (name: string) => ({ name, namespace: opts.namespace, labels: { ...LABELS } });
  const parts: KubeObject[] = texts.map((t, n) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(`skybridge-config-part-${n}`), data: { 'config.part': t } }));
  const data = Object.fromEntries(Object.keys(secrets).sort().map((k) => [k, Buffer.from(secrets[k], 'utf8').toString('base64')]));
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: meta('skybridge-secrets'), type: 'Opaque', data };
  const indexDocument = {
    revision: sha256(text),
    parts: parts.map((p) => p.metadata.name),
    checksums: Object.fromEntries(parts.map((p) => [p.metadata.name, sha256(p.data['config.part'])])),
    secret: 'skybridge-secrets',
    secretChecksum: sha256(Object.keys(data).sort().map((k) => `${k}=${data[k]}\n`).join('')),
    managed: opts.managed ?? {},
    sources: opts.sources ?? {},
  };
  const index: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('skybridge-config-index'), data: { 'index.json': JSON.stringify(indexDocument, null, 2) } };
  return { parts, secret, index, indexDocument, all: [...parts, secret, index] };
}

/** A `kubectl apply -f -` body applying `objects` in order. */
export const kubeList = (objects: KubeObject[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });

/** `.data` lookups over rendered objects, as the proxy's informers would hold them. */
export function lookups(objects: KubeObject[]): { configMap: (name: string) => Record<string, string> | undefined; secret: (name: string) => Record<string, string> | undefined } {
  const find = (kind: string) => (name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)?.data;
  return { configMap: find('ConfigMap'), secret: find('Secret') };
}
