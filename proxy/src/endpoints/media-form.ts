// The start and the upstream call of the multipart operations (image edit and variation,
// transcription): read the form as it streams in, resolve its targets, and build each target's
// request from the same form.
import type { Exchange } from '../http/exchange.ts';
import { readForm, type FormPart } from '../http/multipart.ts';
import { FORM_SPECS, parseForm, type FormOperation, type FormRequest } from '../unified/media.ts';
import { requireOperation, unsupportedOperation } from '../unified/errors.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import type { Target } from '../pipeline/target.ts';
import { governRequest } from '../governance/stage.ts';
import { failEarly } from './inference.ts';

export async function acceptForm(ex: Exchange, op: FormOperation): Promise<{ form: FormRequest; targets: Target[] } | undefined> {
  try {
    const parts = await readForm(ex.req, ex.snapshot.maxBodyBytes);
    const form = parseForm(withRouteFields(parts, ex.bodyFields), FORM_SPECS[op]);
    // The same caller check, key permissions and limits as every JSON inference route.
    ex.governed = await governRequest(ex, form.model, form.fallbacks, op);
    return { form, targets: ex.governed.targets };
  } catch (err) {
    failEarly(ex, op, op, err);
    return undefined;
  }
}

export function formBuild(op: FormOperation, form: FormRequest): (t: Target, adapter: FormatAdapter) => UpstreamRequest {
  return (t, adapter) => {
    requireOperation(t.provider, op);
    if (!adapter.formRequest) throw unsupportedOperation(t.provider.name, op);
    return adapter.formRequest(op, form, t.model);
  };
}

/** A route that names the model in its path overrides the form's text fields, as it does a JSON body's. */
function withRouteFields(parts: FormPart[], fields: Exchange['bodyFields']): FormPart[] {
  if (!fields) return parts;
  const text = Object.entries(fields).filter((e): e is [string, string] => typeof e[1] === 'string');
  if (!text.length) return parts;
  const names = new Set(text.map(([name]) => name));
  return [...parts.filter((p) => !names.has(p.name)), ...text.map(([name, value]) => ({ name, value }))];
}
