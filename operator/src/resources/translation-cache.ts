// Each custom resource's translation (translate.ts), kept between renders: a change to one resource
// re-translates that resource alone. A translation depends on the resource's spec (its generation)
// and on the Secrets it read (their resourceVersions), nothing else, so an entry is reused while both
// are what they were; the whole-document checks (desired.ts) still run over every resource.
import type { CustomResource } from './kinds.ts';
import { translate, type Rejection, type SecretLookup, type Translation } from './translate.ts';

/** A SecretLookup that can also say which version of a Secret it holds (undefined: none). */
export interface VersionedSecretLookup extends SecretLookup {
  version(namespace: string, name: string): string | undefined;
}

interface Entry {
  generation: number;
  /** Every Secret read, and its resourceVersion then ('' when absent). */
  secrets: SecretRead[];
  result: Translation | Rejection;
}

interface SecretRead {
  namespace: string;
  name: string;
  /** `<namespace>/<name>` */
  ref: string;
  version: string;
}

export class TranslationCache {
  readonly #entries = new Map<string, Entry>();
  /** How many reads of each Secret (`<namespace>/<name>`) the entries hold: secretsKey without a walk over every entry. */
  readonly #readers = new Map<string, number>();
  /** Translations reused and computed (logged per render at debug level). */
  hits = 0;
  misses = 0;

  translate(cr: CustomResource, secrets: VersionedSecretLookup): Translation | Rejection {
    const key = cacheKey(cr);
    const generation = cr.metadata.generation;
    const hit = key ? this.#entries.get(key) : undefined;
    if (hit && hit.generation === generation && hit.secrets.every((r) => (secrets.version(r.namespace, r.name) ?? '') === r.version)) {
      this.hits++;
      return hit.result;
    }
    this.misses++;
    const read: SecretRead[] = [];
    const recording: SecretLookup = {
      get(namespace, name) {
        read.push({ namespace, name, ref: `${namespace}/${name}`, version: secrets.version(namespace, name) ?? '' });
        return secrets.get(namespace, name);
      },
      ...(secrets.hint ? { hint: secrets.hint } : {}),
    };
    const result = translate(cr, recording);
    if (key && typeof generation === 'number') this.#set(key, { generation, secrets: read, result });
    return result;
  }

  #set(key: string, entry: Entry | undefined): void {
    const before = this.#entries.get(key);
    for (const r of before?.secrets ?? []) {
      const n = (this.#readers.get(r.ref) ?? 0) - 1;
      if (n > 0) this.#readers.set(r.ref, n);
      else this.#readers.delete(r.ref);
    }
    if (!entry) {
      this.#entries.delete(key);
      return;
    }
    this.#entries.set(key, entry);
    for (const r of entry.secrets) this.#readers.set(r.ref, (this.#readers.get(r.ref) ?? 0) + 1);
  }

  /** The Secrets the cached translations read, each with its version now: a change to any of them changes this. */
  secretsKey(secrets: VersionedSecretLookup): string {
    return [...this.#readers.keys()].sort().map((ref) => `${ref}:${versionOf(secrets, ref)}`).join('\n');
  }

  /** Drops the entries of resources that are gone (`live`: the cache keys of the ones that exist). */
  retain(resources: readonly CustomResource[]): void {
    if (this.#entries.size <= resources.length) return;
    const live = new Set(resources.map(cacheKey));
    for (const key of [...this.#entries.keys()]) if (!live.has(key)) this.#set(key, undefined);
  }
}

/** Each resource object's key, made once (the informer hands the same objects pass after pass). */
const keys = new WeakMap<CustomResource, string | undefined>();

/** uid plus kind and name: a resource deleted and created again under the same name is a new one. */
function cacheKey(cr: CustomResource): string | undefined {
  if (keys.has(cr)) return keys.get(cr);
  const key = cr.metadata.uid ? `${cr.kind}/${cr.metadata.namespace}/${cr.metadata.name}/${cr.metadata.uid}` : undefined;
  keys.set(cr, key);
  return key;
}

function versionOf(secrets: VersionedSecretLookup, ref: string): string {
  const slash = ref.indexOf('/');
  return secrets.version(ref.slice(0, slash), ref.slice(slash + 1)) ?? '';
}
