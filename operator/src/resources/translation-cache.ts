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
  /** `<namespace>/<name>` of every Secret read, and its resourceVersion then ('' when absent). */
  secrets: [string, string][];
  result: Translation | Rejection;
}

export class TranslationCache {
  readonly #entries = new Map<string, Entry>();
  /** Translations reused and computed (logged per render at debug level). */
  hits = 0;
  misses = 0;

  translate(cr: CustomResource, secrets: VersionedSecretLookup): Translation | Rejection {
    const key = cacheKey(cr);
    const generation = cr.metadata.generation;
    const hit = key ? this.#entries.get(key) : undefined;
    if (hit && hit.generation === generation && hit.secrets.every(([ref, v]) => versionOf(secrets, ref) === v)) {
      this.hits++;
      return hit.result;
    }
    this.misses++;
    const read: [string, string][] = [];
    const recording: SecretLookup = {
      get(namespace, name) {
        read.push([`${namespace}/${name}`, secrets.version(namespace, name) ?? '']);
        return secrets.get(namespace, name);
      },
      ...(secrets.hint ? { hint: secrets.hint } : {}),
    };
    const result = translate(cr, recording);
    if (key && typeof generation === 'number') this.#entries.set(key, { generation, secrets: read, result });
    return result;
  }

  /** The Secrets the cached translations read, each with its version now: a change to any of them changes this. */
  secretsKey(secrets: VersionedSecretLookup): string {
    const refs = new Set<string>();
    for (const e of this.#entries.values()) for (const [ref] of e.secrets) refs.add(ref);
    return [...refs].sort().map((ref) => `${ref}:${versionOf(secrets, ref)}`).join('\n');
  }

  /** Drops the entries of resources that are gone (`live`: the cache keys of the ones that exist). */
  retain(resources: readonly CustomResource[]): void {
    if (this.#entries.size <= resources.length) return;
    const live = new Set(resources.map(cacheKey));
    for (const key of this.#entries.keys()) if (!live.has(key)) this.#entries.delete(key);
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
