// /v1/files (upload, list), /v1/files/{id} (retrieve, delete), /v1/files/{id}/content (download):
// OpenAI's Files API, forwarded to an OpenAI-format provider that has it (see provider-resources.ts
// for how the provider is chosen). Uploads are read in full, within the request size limit, so the
// gateway can check them and take its own `provider` field out before sending them on.
import type { Exchange } from '../http/exchange.ts';
import { isFile, readForm, type FormPart } from '../http/multipart.ts';
import { encodeMultipart } from '../http/form-encode.ts';
import { invalidRequest } from '../unified/errors.ts';
import { callProvider, chooseProvider, forwardedQuery, namedProvider, serveResource } from './provider-resources.ts';

/** Form fields that are the gateway's, not the provider's. */
const GATEWAY_FIELDS = new Set(['provider']);

function fieldValue(parts: readonly FormPart[], name: string): string | undefined {
  const p = parts.find((x) => x.name === name);
  return p && !isFile(p) ? p.value : undefined;
}

function checkUpload(parts: readonly FormPart[]): void {
  const file = parts.find((p) => p.name === 'file');
  if (!file) throw invalidRequest("the file field 'file' is required", 'file');
  if (!isFile(file)) throw invalidRequest("'file' must be a file upload, not a text field", 'file');
  if (!fieldValue(parts, 'purpose')) throw invalidRequest("the form field 'purpose' is required (e.g. 'batch')", 'purpose');
  if (parts.some((p) => p.name === 'storage_config' || p.name.startsWith('storage_config['))) {
    throw invalidRequest('storage_config is not supported: files are stored by the provider', 'storage_config');
  }
}

export function uploadFile(ex: Exchange): Promise<void> {
  return serveResource(ex, 'files', 'file_upload', async () => {
    const parts = await readForm(ex.req, ex.snapshot.maxBodyBytes);
    const provider = chooseProvider(ex, 'files', namedProvider(ex, fieldValue(parts, 'provider')));
    checkUpload(parts);
    const payload = encodeMultipart(parts.filter((p) => !GATEWAY_FIELDS.has(p.name)));
    const answer = await callProvider(ex, provider, { method: 'POST', path: '/files', requestType: 'file_upload', payload, stream: false });
    return { provider, answer };
  });
}

export function listFiles(ex: Exchange): Promise<void> {
  return serveResource(ex, 'files', 'file_list', async () => {
    const provider = chooseProvider(ex, 'files', namedProvider(ex));
    const answer = await callProvider(ex, provider, { method: 'GET', path: `/files${forwardedQuery(ex)}`, requestType: 'file_list', stream: false });
    return { provider, answer };
  });
}

function byId(requestType: string, method: 'GET' | 'DELETE', suffix = '', raw = false) {
  return (ex: Exchange): Promise<void> =>
    serveResource(ex, 'files', requestType, async () => {
      const provider = chooseProvider(ex, 'files', namedProvider(ex));
      const path = `/files/${encodeURIComponent(ex.params[0])}${suffix}`;
      const answer = await callProvider(ex, provider, { method, path, requestType, stream: false, ...(raw ? { accept: '*/*' } : {}) });
      return { provider, answer, raw };
    });
}

export const retrieveFile = byId('file_retrieve', 'GET');
export const deleteFile = byId('file_delete', 'DELETE');
export const fileContent = byId('file_content', 'GET', '/content', true);
