// The document and its secret values -> the objects the operator applies: part ConfigMaps, the
// Secret, and the index ConfigMap naming them with checksums. Pure: same input, same bytes.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { secretChecksum } from '../../../proxy/src/contract.ts';
import {
  INDEX_KEY,
  INDEX_NAME,
  LABELS,
  PART_KEY,
  partName,
  sourcesPartName,
  type IndexDocument,
  type ManagedSection,
} from './contract.ts';
import { DEFAULT_LIMITS, packSecrets, secretShardName } from './limits.ts';
import { MAX_PART_BYTES } from './shard.ts';
import { cutParts, isCutId, layoutSources } from './parts.ts';
import { layoutReusing, sortKeys, stableStringify } from './stable-json.ts';
import { PLACEMENT } from './document.ts';
import { RenderMemo } from './memo.ts';

/** Where the per-resource fragments sit in the document: `providers`, `governance.virtual_keys`... */
const FRAGMENT_PARENTS = new Set(Object.values(PLACEMENT).map((p) => p.path.join('.')));
const isFragmentParent = (path: string): boolean => FRAGMENT_PARENTS.has(path);

/** `sources` up to this size stays in the index (a few hundred resources): one object, as before sharding. */
export const INLINE_SOURCES_BYTES = 64 * 1024;

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
  /** Up to this many bytes `sources` sits in the index itself; beyond, in parts of its own. */
  inlineSourcesBytes?: number;
  /**
   * The laid-out text of each resource's fragment from earlier renders (stable-json.ts
   * stableStringifyReusing): given, a render lays out only the fragments it has not seen.
   */
  textCache?: WeakMap<object, string>;
  /** What earlier renders of this target worked out (part checksums, Secret packing, `sources` layout). */
  memo?: RenderMemo;
}

export interface RenderedOutput {
  revision: string;
  documentText: string;
  parts: AppliedObject[];
  /** ConfigMaps holding `sources` when it is too large to sit in the index (else none). */
  sourceParts: AppliedObject[];
  /** The first Secret shard (`skybridge-secrets`). */
  secret: AppliedObject;
  /** Every Secret shard, in order; the index names them all. */
  secrets: AppliedObject[];
  index: AppliedObject;
  indexDocument: IndexDocument;
}

export function renderOutput(input: RenderInput, opts: RenderOptions): RenderedOutput {
  const memo = opts.memo ?? new RenderMemo();
  const maxPartBytes = opts.maxPartBytes ?? MAX_PART_BYTES;
  // Each resource's fragment laid out once and reused (textCache), the parts cut at resource boundaries.
  const laid = layoutReusing(input.document, isFragmentParent, opts.textCache ?? new WeakMap(), isCutId);
  const texts = cutParts(laid, maxPartBytes, memo.parts(maxPartBytes));
  // The parts joined are the document: its hash, without joining it.
  const digest = createHash('sha256');
  for (const t of texts) digest.update(t, 'utf8');
  const revision = digest.digest('hex');
  const owner: OwnerReference[] | undefined = opts.indexUid
    ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: INDEX_NAME, uid: opts.indexUid, controller: true }]
    : undefined;
  const meta = (name: string, ownerReferences?: OwnerReference[]) => ({
    name,
    namespace: opts.namespace,
    labels: { ...LABELS },
    ...(ownerReferences ? { ownerReferences } : {}),
  });

  const parts: AppliedObject[] = texts.map((text, n) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(partName(n), owner),
    data: { [PART_KEY]: text },
  }));
  const shardBytes = opts.maxSecretShardBytes ?? DEFAULT_LIMITS.secretShardBytes;
  // Most edits change no secret value: the sorted data, its packing and checksum are kept then.
  const packing = memo.secrets(input.secrets, () => {
    const data = sortKeys(input.secrets) as Record<string, string>;
    return { data, shardBytes, packed: packSecrets(data, shardBytes, DEFAULT_LIMITS.secretShards), checksum: secretChecksum(data) };
  });
  const { packed } = packing.shardBytes === shardBytes ? packing : { packed: packSecrets(packing.data, shardBytes, DEFAULT_LIMITS.secretShards) };
  // desiredState already refused what would not fit (TooLarge); this is the last line of defence.
  if (!packed) throw new RangeError('the secret values do not fit in the Secret shards');
  const secrets: AppliedObject[] = packed.map((data, n) => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta(secretShardName(n), owner), type: 'Opaque', data }));

  // Each resource has an entry in `sources` (~100-200 bytes): inline it would make every edit rewrite
  // them all and cap the index near 4,600 resources, so past a size it goes in parts of its own.
  const inlineLimit = opts.inlineSourcesBytes ?? INLINE_SOURCES_BYTES;
  const laidOut = memo.sources(input.sources, () => {
    const laidSources = layoutSources(input.sources);
    return { laidSources, bytes: Buffer.byteLength(laidSources.segments.join(''), 'utf8'), cut: new Map<string, string[]>() };
  });
  const inline = laidOut.bytes <= inlineLimit;
  const cutKey = String(maxPartBytes);
  let sourceTexts: string[] = [];
  if (!inline) {
    sourceTexts = laidOut.cut.get(cutKey) ?? cutParts(laidOut.laidSources, maxPartBytes);
    laidOut.cut.set(cutKey, sourceTexts);
  }
  const sourceParts: AppliedObject[] = sourceTexts.map((text, n) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(sourcesPartName(n), owner),
    data: { [PART_KEY]: text },
  }));

  const indexDocument: IndexDocument = {
    revision,
    parts: parts.map((p) => p.metadata.name),
    // Each part hashed once per text: an edit hashes the one part it changed.
    checksums: Object.fromEntries([...texts.map((t, n) => [partName(n), memo.checksum(partName(n), t)]), ...sourceTexts.map((t, n) => [sourcesPartName(n), memo.checksum(sourcesPartName(n), t)])]),
    secret: secrets[0].metadata.name,
    secrets: secrets.map((s) => s.metadata.name),
    // Over the merged data, so it is the same however the keys are packed.
    secretChecksum: packing.checksum,
    managed: inline ? input.managed : {},
    sources: inline ? { ...input.sources } : {},
    ...(inline ? {} : { sourceParts: sourceParts.map((p) => p.metadata.name) }),
  };
  const index: AppliedObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(INDEX_NAME),
    data: { [INDEX_KEY]: stableStringify(indexDocument) },
  };
  return {
    revision,
    // Joined when asked (tests): a render has no use for the whole text.
    get documentText() {
      return texts.join('');
    },
    parts,
    sourceParts,
    secret: secrets[0],
    secrets,
    index,
    indexDocument,
  };
}
