// Per-attempt request shaping for Azure OpenAI, once the key is chosen: the key's resource (origin
// and path), its deployment for the model, its api-version, and its authentication.
import type { ProviderKey } from '../runtime.ts';
import type { SignableRequest, SignedRequest } from '../adapter.ts';
import { GatewayError } from '../../unified/errors.ts';
import { AZURE_DEFAULT_API_VERSION } from './key.ts';
import { azureOperationPath, formFor, modelBodyFor } from './paths.ts';
import { encodeMultipart } from '../../upstream/form-encode.ts';
import { FOUNDRY_OCR, foundryOrigin } from './ocr.ts';

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
  if (op === FOUNDRY_OCR) return signFoundryOcr(req, key, own?.basePath ?? base, own?.origin ?? req.origin, deployments);
  const path = (own?.basePath ?? base) + azureOperationPath(op, deployments, own?.apiVersion ?? AZURE_DEFAULT_API_VERSION);
  const body = op === '/responses' ? modelBodyFor(req.body, deployments) : undefined;
  // Sora 2's create is a form naming the deployment in `model`, like a Responses body.
  const form = op === '/videos' && req.method === 'POST' ? formFor(req.form, deployments) : undefined;
  const payload = form && encodeMultipart(form);
  if (payload) headers['content-type'] = payload.contentType;
  return { headers, path, ...(own ? { origin: own.origin } : {}), ...(body !== undefined ? { body } : {}), ...(payload && { payload }) };
}

/**
 * Foundry's OCR: at the resource's root (the endpoint's path without `/openai`) on its Foundry host,
 * the deployment in the body's `model`, the key as a bearer token (Foundry's documented form, for an
 * API key and an Entra ID token alike).
 */
function signFoundryOcr(req: SignableRequest, key: ProviderKey | undefined, basePath: string, origin: string, deployments: Readonly<Record<string, string>>): SignedRequest {
  const headers = { ...req.headers };
  delete headers['api-key'];
  const { 'api-key': value, authorization } = azureAuthHeaders(key);
  headers.authorization = authorization ?? `Bearer ${value}`;
  const body = modelBodyFor(req.body, deployments);
  return { headers, path: `${basePath.replace(/\/openai$/, '')}${FOUNDRY_OCR}`, origin: foundryOrigin(origin), ...(body !== undefined ? { body } : {}) };
}
