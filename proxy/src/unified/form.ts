// A multipart form as the gateway holds it between reading the client's (http/multipart.ts) and
// writing one for an upstream (upstream/form-encode.ts): named fields and files, in order.
export interface FormField {
  name: string;
  value: string;
}

export interface FormFile {
  name: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export type FormPart = FormField | FormFile;

export function isFile(p: FormPart): p is FormFile {
  return 'data' in p;
}

/** The value of a form's text field `name` (undefined when absent, or when it is a file). */
export function fieldValue(parts: readonly FormPart[], name: string): string | undefined {
  const p = parts.find((x) => x.name === name);
  return p && !isFile(p) ? p.value : undefined;
}
