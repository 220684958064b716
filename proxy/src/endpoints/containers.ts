// /v1/containers (create, list), /v1/containers/{id} (retrieve, delete), and the files in a
// container: /v1/containers/{id}/files (create, list), /v1/containers/{id}/files/{file_id}
// (retrieve, delete), /v1/containers/{id}/files/{file_id}/content (download, relayed as it arrives).
// OpenAI's Containers API, forwarded to a provider that has it (OpenAI; Azure OpenAI's v1 API),
// governed like files: the provider is named by the client as for files (provider-resources.ts:
// the body's or form's `provider`, the `provider` query parameter, the `x-model-provider` header),
// one call with the account's resource key, never retried. A created container is charged its
// session's minimum at OpenAI's price (governance/pricing/containers.ts).
import { isFile, isMultipart, readForm, type FormPart } from '../http/multipart.ts';
import { parseJson, readBody, validated } from '../http/body.ts';
import { encodeMultipart } from '../upstream/form-encode.ts';
import { fieldValue } from '../unified/form.ts';
import { invalidRequest } from '../unified/errors.ts';
import { ContainerCreateSchema, ContainerFileRefSchema } from '../unified/containers.ts';
import { containerSessionCost } from '../governance/pricing/containers.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { chooseProvider, providerParts, forwardedQuery, httpRequestOf, namedProvider, resourceRoute, type ResourceCall } from './provider-resources.ts';

const parseCreate = validated(ContainerCreateSchema);
const parseFileRef = validated(ContainerFileRefSchema);

/** A body without the gateway's `provider` field: the provider never sees it. */
function withoutProvider<T extends { provider?: string }>(body: T): Omit<T, 'provider'> {
  const { provider: _provider, ...rest } = body;
  return rest;
}

const idPath = (...ids: string[]) => ids.map((id) => `/${encodeURIComponent(id)}`).join('');

async function readJsonBody(ctx: RequestContext): Promise<unknown> {
  return parseJson(await readBody(httpRequestOf(ctx), ctx.snapshot.maxBodyBytes));
}

export const createContainer = resourceRoute('containers', 'container_create', async (ctx) => {
  const req = parseCreate(await readJsonBody(ctx));
  const provider = chooseProvider(ctx, 'containers', namedProvider(ctx, req.provider));
  return {
    provider,
    up: { method: 'POST', path: '/containers', requestType: 'container_create', body: withoutProvider(req), stream: false },
    // Priced by what the provider created (its memory tier), not by what was asked.
    price: (answer) => containerSessionCost(provider.kind.format, memoryLimitOf(answer)),
  };
});

function memoryLimitOf(answer: unknown): string | undefined {
  if (!answer || typeof answer !== 'object') return undefined;
  const m = (answer as { memory_limit?: unknown }).memory_limit;
  // OpenAI's default tier when the answer does not say.
  return typeof m === 'string' ? m : '1g';
}

export const listContainers = resourceRoute('containers', 'container_list', async (ctx) => {
  const provider = chooseProvider(ctx, 'containers', namedProvider(ctx));
  return { provider, up: { method: 'GET', path: `/containers${forwardedQuery(ctx)}`, requestType: 'container_list', stream: false } };
});

/** A call on one container (params[0]) or one of its files (params[1]). */
function onContainer(requestType: string, method: 'GET' | 'DELETE', depth: 1 | 2, suffix = '', raw = false) {
  return resourceRoute('containers', requestType, async (ctx): Promise<ResourceCall> => {
    const provider = chooseProvider(ctx, 'containers', namedProvider(ctx));
    const ids = depth === 1 ? [ctx.params[0]] : [ctx.params[0], 'files', ctx.params[1]];
    const path = `/containers${idPath(...ids)}${suffix}`;
    return { provider, up: { method, path, requestType, stream: false, ...(raw ? { accept: '*/*' } : {}) }, raw };
  });
}

export const retrieveContainer = onContainer('container_retrieve', 'GET', 1);
export const deleteContainer = onContainer('container_delete', 'DELETE', 1);
export const retrieveContainerFile = onContainer('container_file_retrieve', 'GET', 2);
export const deleteContainerFile = onContainer('container_file_delete', 'DELETE', 2);
export const containerFileContent = onContainer('container_file_content', 'GET', 2, '/content', true);

export const listContainerFiles = resourceRoute('containers', 'container_file_list', async (ctx) => {
  const provider = chooseProvider(ctx, 'containers', namedProvider(ctx));
  const path = `/containers${idPath(ctx.params[0])}/files${forwardedQuery(ctx)}`;
  return { provider, up: { method: 'GET', path, requestType: 'container_file_list', stream: false } };
});


function checkUpload(parts: readonly FormPart[]): void {
  const file = parts.find((p) => p.name === 'file');
  if (file && !isFile(file)) throw invalidRequest("'file' must be a file upload, not a text field", 'file');
  if (!file && !fieldValue(parts, 'file_id')) throw invalidRequest("the file field 'file' is required (or send JSON with a 'file_id')", 'file');
}

/**
 * A file into a container: uploaded (multipart, read in full within the request size limit, as a
 * Files upload is) or copied from a file the provider already has (JSON with `file_id`).
 */
export const createContainerFile = resourceRoute('containers', 'container_file_create', async (ctx) => {
  const path = `/containers${idPath(ctx.params[0])}/files`;
  const req = httpRequestOf(ctx);
  if (isMultipart(req)) {
    const parts = await readForm(req, ctx.snapshot.maxBodyBytes);
    const provider = chooseProvider(ctx, 'containers', namedProvider(ctx, fieldValue(parts, 'provider')));
    checkUpload(parts);
    const payload = encodeMultipart(providerParts(parts));
    return { provider, up: { method: 'POST', path, requestType: 'container_file_create', payload, stream: false } };
  }
  const ref = parseFileRef(await readJsonBody(ctx));
  const provider = chooseProvider(ctx, 'containers', namedProvider(ctx, ref.provider));
  return { provider, up: { method: 'POST', path, requestType: 'container_file_create', body: withoutProvider(ref), stream: false } };
});
