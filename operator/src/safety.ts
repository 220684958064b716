// The rule that keeps a serving configuration from being emptied by accident. A render is held
// (not written; the proxies keep the last one) when it would remove every provider that is served,
// or more than half of the served providers and virtual keys, while the custom resources they came
// from still exist: that is what a deleted or emptied Secret, or a broken bulk edit, looks like.
// Removing objects by deleting their custom resources is explicit intent and is never held, nor is
// what goes with it: a virtual key refused because the provider, team or customer it named was deleted.
import type { IndexDocument } from './render/contract.ts';
import type { RenderInput } from './render/output.ts';

/** Sections whose loss takes traffic down: callers lose their provider or their key. */
const GUARDED = ['providers', 'virtual_keys'] as const;
/** Sections virtual keys reference by id besides providers: a key cannot be served without them. */
const KEY_GROUPS = ['teams', 'customers'] as const;

export interface HoldDecision {
  /** Why the render is held; undefined when it may be written. */
  reason?: string;
  /** `<section>/<id>` that would go although their custom resource still exists. */
  lost: string[];
}

/**
 * @param live   the index the proxies serve now (undefined before the first render)
 * @param next   what would be written
 * @param exists whether the custom resource `<Kind> <namespace>/<name>` still exists (not being deleted)
 * @param reasonOf the reason of that resource's Accepted condition in `next` (`ReferenceNotFound`, ...)
 */
export function holdDecision(
  live: Pick<IndexDocument, 'managed' | 'sources'> | undefined,
  next: Pick<RenderInput, 'managed'>,
  exists: (source: string) => boolean,
  reasonOf: (source: string) => string | undefined = () => undefined,
): HoldDecision {
  if (!live) return { lost: [] };
  // The very id lists served (an edit that adds and removes nothing keeps them, render/document.ts): nothing goes.
  if (GUARDED.every((section) => live.managed[section] === next.managed[section])) return { lost: [] };
  const served: string[] = [];
  const kept = new Set<string>();
  for (const section of GUARDED) {
    for (const id of live.managed[section] ?? []) served.push(`${section}/${id}`);
    for (const id of next.managed[section] ?? []) kept.add(`${section}/${id}`);
  }
  const gone = served.filter((k) => !kept.has(k) && live.sources[k] !== undefined);
  let lost = gone.filter((k) => exists(live.sources[k]));
  // Providers, teams or customers deleted on purpose and no provider lost otherwise: the keys refused
  // for naming them follow the deletion. A provider lost otherwise (an emptied Secret) keeps every
  // key counted.
  const providerDeleted = gone.some((k) => k.startsWith('providers/') && !exists(live.sources[k]));
  const groupDeleted = KEY_GROUPS.some((section) => {
    const stays = new Set(next.managed[section] ?? []);
    return (live.managed[section] ?? []).some((id) => !stays.has(id) && live.sources[`${section}/${id}`] !== undefined && !exists(live.sources[`${section}/${id}`]));
  });
  if ((providerDeleted || groupDeleted) && !lost.some((k) => k.startsWith('providers/'))) {
    lost = lost.filter((k) => !(k.startsWith('virtual_keys/') && reasonOf(live.sources[k]) === 'ReferenceNotFound'));
  }
  if (!lost.length) return { lost };
  const servedProviders = (live.managed.providers ?? []).length;
  const nextProviders = (next.managed.providers ?? []).length;
  if (servedProviders > 0 && nextProviders === 0) {
    return { lost, reason: `it would remove every provider (${servedProviders} served) while their custom resources still exist` };
  }
  if (served.length >= 2 && lost.length * 2 > served.length) {
    return { lost, reason: `it would remove ${lost.length} of the ${served.length} served providers and virtual keys at once while their custom resources still exist` };
  }
  return { lost };
}

/** A short list for messages: the first few, then how many more. */
export function describeLost(lost: readonly string[], max = 8): string {
  const head = lost.slice(0, max).join(', ');
  return lost.length > max ? `${head} and ${lost.length - max} more` : head;
}
