// /v1/files (upload, list), /v1/files/{id} (retrieve, delete), /v1/files/{id}/content (download):
// OpenAI's Files API, forwarded to an OpenAI-format provider that has it (see provider-resources.ts
// for how the provider is chosen). Uploads are read in full, within the request size limit, so the
// gateway can check them and take its own `provider` field out before sending them on.
import { isFile, readForm, type FormPart } from '../http/multipart.ts';
import { encodeMultipart } from '../upstream/form-encode.ts';
import { fieldValue } from '../unified/form.ts';
import { invalidRequest } from '../unified/errors.ts';
import { chooseProvider, providerParts, forwardedQuery, httpRequestOf, namedProvider, resourceRoute } from './provider-resources.ts';


function checkUpload(parts: readonly FormPart[]): void {
  const file = parts.find((p) => p.name === 'file');
  if (!file) throw invalidRequest("the file field 'file' is required", 'file');
  if (!isFile(file)) throw invalidRequest("'file' must be a file upload, not a text field", 'file');
  if (!fieldValue(parts, 'purpose')) throw invalidRequest("the form field 'purpose' is required (e.g. 'batch')", 'purpose');
  if (parts.some((p) => p.name === 'storage_config' || p.name.startsWith('storage_config['))) {
    throw invalidRequest('storage_config is not supported: files are stored by the provider', 'storage_config');
  }
}

export const uploadFile = resourceRoute('files', 'file_upload', async (ctx) => {
  const parts = await readForm(httpRequestOf(ctx), ctx.snapshot.maxBodyBytes);
  const provider = chooseProvider(ctx, 'files', namedProvider(ctx, fieldValue(parts, 'provider')));
  checkUpload(parts);
  const payload = encodeMultipart(providerParts(parts));
  return { provider, up: { method: 'POST', path: '/files', requestType: 'file_upload', payload, stream: false } };
});

export const listFiles = resourceRoute('files', 'file_list', async (ctx) => {
  const provider = chooseProvider(ctx, 'files', namedProvider(ctx));
  return { provider, up: { method: 'GET', path: `/files${forwardedQuery(ctx)}`, requestType: 'file_list', stream: false } };
});

function byId(requestType: string, method: 'GET' | 'DELETE', suffix = '', raw = false) {
  return resourceRoute('files', requestType, async (ctx) => {
    const provider = chooseProvider(ctx, 'files', namedProvider(ctx));
    const path = `/files/${encodeURIComponent(ctx.params[0])}${suffix}`;
    return { provider, up: { method, path, requestType, stream: false, ...(raw ? { accept: '*/*' } : {}) }, raw };
  });
}

export const retrieveFile = byId('file_retrieve', 'GET');
export const deleteFile = byId('file_delete', 'DELETE');
export const fileContent = byId('file_content', 'GET', '/content', true);
