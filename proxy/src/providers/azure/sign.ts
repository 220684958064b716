// Per-attempt request shaping for Azure OpenAI, once the key is chosen: the key's resource (origin
// and path), its deployment for the model, its api-version, and its authentication.
import type { ProviderKey } from '../runtime.ts';
import type { SignableRequest, SignedRequest } from '../adapter.ts';
import { GatewayError } from '../../unified/errors.ts';
import { AZURE_DEFAULT_API_VERSION } from './key.ts';
import { azureOperationPath, formFor, responsesBodyFor } from './paths.ts';
import { encodeMultipart } from '../../upstream/form-encode.ts';

const NO_DEPLOYMENTS: Readonly<Record<string, string>> = Object.freeze({});

/** `api-key: <key>` by default; `Authorization: Bearer <token>` for a key configured with `auth_type: bearer`. */
export function azureAuthHeaders(key: ProviderKey | undefined): Record<string, string> {
  if (!key?.value) {
    throw new GatewayError(500, `azure key '${key?.name ?? ''}' has no value (an API key or an Entra ID token)`, { code: 'no_credentials', provider: 'azure' });
  }
  return key.azure?.bearer ? { authorization: `Bearer ${key.value}` } : { 'api-key': key.value };
}

export async function signAzure(req: SignableRequest, key: ProviderKey | undefined): Promise<SignedRequest> {
  const own = key?.azure;
  const base = req.basePath ?? '';
  const headers = { ...req.headers };
  delete headers['api-key'];
  delete headers.authorization;
  Object.assign(headers, azureAuthHeaders(key));
  // A path override (request_path_overrides) is sent as configured.
  if (!req.path.startsWith(base)) return { headers, path: req.path, ...(own ? { origin: own.origin } : {}) };
  const op = req.path.slice(base.length);
  const deployments = own?.deployments ?? NO_DEPLOYMENTS;
  const path = (own?.basePath ?? base) + azureOperationPath(op, deployments, own?.apiVersion ?? AZURE_DEFAULT_API_VERSION);
  const body = op === '/responses' ? responsesBodyFor(req.body, deployments) : undefined;
  // Sora 2's create is a form naming the deployment in `model`, like a Responses body.
  const form = op === '/videos' && req.method === 'POST' ? formFor(req.form, deployments) : undefined;
  const payload = form && encodeMultipart(form);
  if (payload) headers['content-type'] = payload.contentType;
  return { headers, path, ...(own ? { origin: own.origin } : {}), ...(body !== undefined ? { body } : {}), ...(payload && { payload }) };
}

