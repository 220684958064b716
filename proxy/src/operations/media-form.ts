// The start and the upstream call of the multipart operations (image edit and variation,
// transcription): read the form as it streams in and build each target's request from it.
import { readForm, type FormPart } from '../http/multipart.ts';
import { FORM_SPECS, parseForm, type FormOperation, type FormRequest } from '../unified/media.ts';
import { invalidRequest, requireOperation, unsupportedOperation } from '../unified/errors.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import type { Target } from '../pipeline/target.ts';
import type { RequestContext } from '../pipeline/context.ts';

/** The multipart form of an HTTP request, checked for `op`. */
export async function readFormRequest(ctx: RequestContext, op: FormOperation): Promise<FormRequest> {
  // In-process callers (async jobs) hand over the parts an HTTP request was read into.
  if (!ctx.http) {
    if (Array.isArray(ctx.input)) return parseForm(ctx.input as FormPart[], FORM_SPECS[op]);
    throw invalidRequest(`${op} takes a multipart form: over HTTP, or its parts in-process`);
  }
  const parts = await readForm(ctx.http.req, ctx.snapshot.maxBodyBytes);
  return parseForm(withRouteFields(parts, ctx.http.bodyFields), FORM_SPECS[op]);
}

export function formBuild(op: FormOperation, form: FormRequest): (t: Target, adapter: FormatAdapter) => UpstreamRequest {
  return (t, adapter) => {
    requireOperation(t.provider, op);
    if (!adapter.formRequest) throw unsupportedOperation(t.provider.name, op);
    return adapter.formRequest(op, form, t.model);
  };
}

/** A route that names the model in its path overrides the form's text fields, as it does a JSON body's. */
function withRouteFields(parts: FormPart[], fields: Readonly<Record<string, unknown>> | undefined): FormPart[] {
  if (!fields) return parts;
  const text = Object.entries(fields).filter((e): e is [string, string] => typeof e[1] === 'string');
  if (!text.length) return parts;
  const names = new Set(text.map(([name]) => name));
  return [...parts.filter((p) => !names.has(p.name)), ...text.map(([name, value]) => ({ name, value }))];
}
