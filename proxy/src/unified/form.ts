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
