// The document and its secret values -> the objects the operator applies: part ConfigMaps, the
// Secret, and the index ConfigMap naming them with checksums. Pure: same input, same bytes.
import { secretChecksum, sha256Hex } from '../../../proxy/src/contract.ts';
import {
  INDEX_KEY,
  INDEX_NAME,
  LABELS,
  PART_KEY,
  partName,
  type IndexDocument,
  type ManagedSection,
} from './contract.ts';
import { DEFAULT_LIMITS, packSecrets, secretShardName } from './limits.ts';
import { MAX_PART_BYTES, shardText } from './shard.ts';
import { sortKeys, stableStringify } from './stable-json.ts';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** An object as applied with server-side apply. */
export interface AppliedObject {
  apiVersion: 'v1';
  kind: 'ConfigMap' | 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string>; ownerReferences?: OwnerReference[] };
  type?: 'Opaque';
  data: Record<string, string>;
}

export interface RenderInput {
  document: Record<string, unknown>;
  /** Secret data key -> base64 value. */
  secrets: Readonly<Record<string, string>>;
  managed: Partial<Record<ManagedSection, string[]>>;
  sources: Readonly<Record<string, string>>;
}

export interface RenderOptions {
  namespace: string;
  maxPartBytes?: number;
  /** Decoded bytes per Secret shard (tests make it small). */
  maxSecretShardBytes?: number;
  /** uid of the existing index ConfigMap: parts and Secret name it as owner so deleting it collects them. */
  indexUid?: string;
}

export interface RenderedOutput {
  revision: string;
  documentText: string;
  parts: AppliedObject[];
  /** The first Secret shard (`skybridge-secrets`). */
  secret: AppliedObject;
  /** Every Secret shard, in order; the index names them all. */
  secrets: AppliedObject[];
  index: AppliedObject;
  indexDocument: IndexDocument;
}

export function renderOutput(input: RenderInput, opts: RenderOptions): RenderedOutput {
  const documentText = stableStringify(input.document);
  const revision = sha256Hex(documentText);
  const owner: OwnerReference[] | undefined = opts.indexUid
    ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: INDEX_NAME, uid: opts.indexUid, controller: true }]
    : undefined;
  const meta = (name: string, ownerReferences?: OwnerReference[]) => ({
    name,
    namespace: opts.namespace,
    labels: { ...LABELS },
    ...(ownerReferences ? { ownerReferences } : {}),
  });

  const texts = shardText(documentText, opts.maxPartBytes ?? MAX_PART_BYTES);
  const parts: AppliedObject[] = texts.map((text, n) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(partName(n), owner),
    data: { [PART_KEY]: text },
  }));
  const secretData = sortKeys(input.secrets) as Record<string, string>;
  // desiredState already refused what would not fit (TooLarge); this is the last line of defence.
  const packed = packSecrets(secretData, opts.maxSecretShardBytes ?? DEFAULT_LIMITS.secretShardBytes, DEFAULT_LIMITS.secretShards);
  if (!packed) throw new RangeError('the secret values do not fit in the Secret shards');
  const secrets: AppliedObject[] = packed.map((data, n) => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta(secretShardName(n), owner), type: 'Opaque', data }));

  const indexDocument: IndexDocument = {
    revision,
    parts: parts.map((p) => p.metadata.name),
    checksums: Object.fromEntries(texts.map((t, n) => [partName(n), sha256Hex(t)])),
    secret: secrets[0].metadata.name,
    secrets: secrets.map((s) => s.metadata.name),
    // Over the merged data, so it is the same however the keys are packed.
    secretChecksum: secretChecksum(secretData),
    managed: input.managed,
    sources: { ...input.sources },
  };
  const index: AppliedObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(INDEX_NAME),
    data: { [INDEX_KEY]: stableStringify(indexDocument) },
  };
  return { revision, documentText, parts, secret: secrets[0], secrets, index, indexDocument };
}
