// The first edits after start-up cost two to three times what later ones do: the first pass takes
// every memo's miss path (all is new), an edit the hit paths, which the runtime has not compiled yet.
// Rehearsing a few edits right after the first render (a copy of a resource of each of a few kinds
// passed again as a new generation, under a uid of its own, its result thrown away) warms those
// paths before a real edit waits on them. Nothing is written; the memos it touches check their
// inputs, so the next pass gives what it would have given.
import type { CustomResource } from './resources/kinds.ts';
import { desiredState, type DesiredState, type Translator } from './resources/desired.ts';
import type { CheckMemo } from '../../proxy/src/contract.ts';
import type { SecretLookup } from './resources/translate.ts';

/** Kinds whose edits take different paths (a key, a provider others refer to, a rule, a group). */
const REHEARSED = ['VirtualKey', 'Provider', 'RoutingRule', 'Team'] as const;

/** `render`: what a pass does with the desired state after it (the render, its result not written). */
export function rehearseEdits(resources: readonly CustomResource[], secrets: SecretLookup, translator: Translator, memo: CheckMemo, render: (desired: DesiredState) => void): number {
  let rehearsed = 0;
  for (const kind of REHEARSED) {
    const i = resources.findIndex((r) => r.kind === kind && !r.metadata.deletionTimestamp && typeof r.metadata.generation === 'number');
    if (i < 0) continue;
    const r = resources[i];
    // A uid of its own: the translation kept for the real resource is never replaced by one whose
    // generation its next real edit would have (that edit would then be taken for this one).
    const edited: CustomResource = { ...r, metadata: { ...r.metadata, uid: `${r.metadata.uid ?? ''}/rehearsal`, generation: (r.metadata.generation as number) + 1 } };
    const list = resources.map((x, j) => (j === i ? edited : x));
    render(desiredState(list, secrets, undefined, translator, memo));
    rehearsed++;
  }
  return rehearsed;
}
