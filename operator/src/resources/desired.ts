// All custom resources -> the desired rendered state and a verdict per resource. Each CR is checked
// on its own (translate.ts), then together: ids unique per section, and the assembled document
// through the proxy's own checkConfig. A CR the whole-document check blames is left out and the
// rest is checked again, so one bad CR never blocks the others. Pure and order-independent.
import { Buffer } from 'node:buffer';
import { checkConfig, ConfigError, type FieldError, type RoutingRule, validateRuleForWrite } from '../../../proxy/src/contract.ts';
import { buildDocument, ownerOf, type SourcedFragment } from '../render/document.ts';
import type { RenderInput } from '../render/output.ts';
import { compareResources, crRef, type CustomResource } from './kinds.ts';
import { describeErrors, isRejection, translate, type Rejection, type SecretLookup, type Translation } from './translate.ts';

export interface Verdict {
  accepted: boolean;
  reason: string;
  message: string;
}

export interface DesiredState {
  input: RenderInput;
  /** By `crRef` (`Kind namespace/name`). */
  verdicts: Map<string, Verdict>;
  /** Problems of the whole document that no single CR explains: the render must not be applied. */
  unattributed: string[];
  /** checkConfig warnings (sections accepted but not built yet). */
  warnings: string[];
}

const ACCEPTED: Verdict = { accepted: true, reason: 'Valid', message: 'The spec is valid and included in the rendered configuration.' };

export function desiredState(resources: readonly CustomResource[], secrets: SecretLookup): DesiredState {
  const verdicts = new Map<string, Verdict>();
  const reject = (ref: string, r: Rejection) => verdicts.set(ref, { accepted: false, reason: r.reason, message: r.message });
  const live = resources.filter((r) => !r.metadata.deletionTimestamp).sort(compareResources);

  // Alone, then against the ones accepted before it (oldest first, so a new CR never evicts an old one).
  const accepted = new Map<string, Translation>();
  const claimed = new Map<string, string>(); // `<section>/<id>` or `secret/<KEY>` -> owner
  const rules: RoutingRule[] = [];
  for (const cr of live) {
    const ref = crRef(cr);
    const t = translate(cr, secrets);
    if (isRejection(t)) {
      reject(ref, t);
      continue;
    }
    const clash = conflict(t, ref, claimed) ?? ruleClash(t, rules);
    if (clash) {
      reject(ref, clash);
      continue;
    }
    for (const f of t.fragments) claimed.set(`${f.section}/${f.id}`, ref);
    for (const k of Object.keys(t.secrets)) claimed.set(`secret/${k}`, ref);
    for (const f of t.fragments) if (f.section === 'routing_rules') rules.push(f.value as RoutingRule);
    accepted.set(ref, t);
  }

  // Together: every round either passes or removes at least one CR, so this ends.
  const unattributed: string[] = [];
  let warnings: string[] = [];
  for (;;) {
    const fragments: SourcedFragment[] = [];
    for (const [ref, t] of accepted) for (const f of t.fragments) fragments.push({ ...f, source: ref });
    const built = buildDocument(fragments);
    const secretData = mergeSecrets(accepted.values());
    const env = Object.fromEntries(Object.entries(secretData).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    let errors: FieldError[];
    try {
      warnings = checkConfig(structuredClone(built.document), 'the custom resources', env).warnings;
      errors = [];
    } catch (err) {
      errors = err instanceof ConfigError ? err.errors : [{ path: '(root)', message: String(err) }];
    }
    const blamed = new Map<string, FieldError[]>();
    for (const e of errors) {
      const owner = ownerOf(built.owners, e.path);
      if (!owner) {
        unattributed.push(`${e.path}: ${e.message}`);
        continue;
      }
      const message = friendly(e.message, env);
      const path = message === EMPTY_SECRET ? referencePath(owner.specPath) : owner.specPath;
      blamed.set(owner.source, [...(blamed.get(owner.source) ?? []), { path, message }]);
    }
    for (const [ref, errs] of blamed) {
      accepted.delete(ref);
      reject(ref, { reason: 'InvalidSpec', message: describeErrors(errs) });
    }
    if (!blamed.size) {
      for (const ref of accepted.keys()) verdicts.set(ref, ACCEPTED);
      return {
        input: { document: built.document, secrets: secretData, managed: built.managed, sources: built.sources },
        verdicts,
        unattributed,
        warnings,
      };
    }
  }
}

function conflict(t: Translation, ref: string, claimed: ReadonlyMap<string, string>): Rejection | undefined {
  for (const f of t.fragments) {
    const owner = claimed.get(`${f.section}/${f.id}`);
    if (owner) return { reason: 'Conflict', message: `${f.section} id '${f.id}' is already defined by ${owner}; rename one of them (ids are unique across watched namespaces)` };
  }
  for (const k of Object.keys(t.secrets)) {
    const owner = claimed.get(`secret/${k}`);
    if (owner) return { reason: 'Conflict', message: `its Secret data key ${k} collides with one of ${owner} (names differ only in punctuation); rename one of them` };
  }
  return undefined;
}

/** Routing rule names are unique within a scope (the management API refuses duplicates too). */
function ruleClash(t: Translation, rules: readonly RoutingRule[]): Rejection | undefined {
  for (const f of t.fragments) {
    if (f.section !== 'routing_rules') continue;
    const errors = validateRuleForWrite(f.value, { existing: rules });
    if (errors.length) return { reason: 'Conflict', message: describeErrors(errors) };
  }
  return undefined;
}

function mergeSecrets(translations: Iterable<Translation>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of translations) Object.assign(out, t.secrets);
  return out;
}

const EMPTY_SECRET = 'the Secret value it references is empty';

/** The proxy speaks of environment variables; here there are only the Secret values the CRs reference. */
function friendly(message: string, env: Readonly<Record<string, string>>): string {
  const m = /^environment variable (\S+) is not set$/.exec(message);
  if (!m) return message;
  if (m[1] in env) return EMPTY_SECRET;
  return `'env.${m[1]}' cannot be resolved in Kubernetes: give the value, or a secretKeyRef where the field takes one`;
}

/** The spec field holding the reference for a config field: `keys[0].value` -> `keys[0].valueFrom`, `headers.X` -> `headersFrom.X`. */
function referencePath(configPath: string): string {
  if (/(^|\.)(value|secret)$/.test(configPath)) return `${configPath}From`;
  return configPath.replace(/(^|\.)headers\./, '$1headersFrom.');
}
