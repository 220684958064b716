// Per-request authentication for Vertex AI, in the reference gateway's order: a service account
// (`auth_credentials`) gets an OAuth2 access token; otherwise the key's `value` is a Vertex API key,
// which reaches Google's own models only; otherwise Application Default Credentials (the metadata
// server on GKE/GCE, GOOGLE_APPLICATION_CREDENTIALS, gcloud) through google-auth-library.
// Also scopes the path to the key's project and location, and picks the key's regional host.
import type { ProviderKey } from '../runtime.ts';
import type { SignableRequest, SignedRequest } from '../adapter.ts';
import { GatewayError } from '../../unified/errors.ts';
import { serviceAccount, type ServiceAccount } from './credentials.ts';
import { scopedPath, vertexOrigin } from './paths.ts';
import { CLOUD_PLATFORM_SCOPE, tokens } from './token.ts';

export async function signVertex(req: SignableRequest, key: ProviderKey | undefined): Promise<SignedRequest> {
  const cfg = key?.vertex;
  if (!key || !cfg) {
    throw new GatewayError(500, 'vertex key has no vertex_key_config (project_id, region)', { code: 'no_credentials', provider: 'vertex' });
  }
  const path = scopedPath(req.path, cfg);
  const headers = { ...req.headers };
  if (cfg.auth_credentials) headers.authorization = `Bearer ${await tokens.token(accountOf(key, cfg.auth_credentials))}`;
  // An API key reaches Google's own models only; partner models (Anthropic, Mistral) need OAuth.
  else if (key.value && !/\/publishers\/(anthropic|mistralai)\//.test(path)) headers['x-goog-api-key'] = key.value;
  else headers.authorization = `Bearer ${await defaultCredentialsToken()}`;
  // Each key reaches its own region's host, unless base_url points somewhere other than Google (a proxy, a test server).
  const origin = GOOGLE_HOST.test(new URL(req.origin).hostname) ? vertexOrigin(cfg.region) : req.origin;
  return { headers, path, origin };
}

const GOOGLE_HOST = /(^|[.-])aiplatform(\.[a-z0-9-]+\.rep)?\.googleapis\.com$/;

/** Vertex answered 401 to a request carrying `sent`: a cached token is dropped, and signing again fetches a new one. */
export function vertexAuthRejected(key: ProviderKey | undefined, sent: Record<string, string>): boolean {
  const creds = key?.vertex?.auth_credentials;
  const token = /^Bearer (.+)$/.exec(sent.authorization ?? '')?.[1];
  if (!key || !creds || !token) return false;
  tokens.reject(accountOf(key, creds), token);
  return true;
}

function accountOf(key: ProviderKey, credentials: string): ServiceAccount {
  try {
    return serviceAccount(credentials);
  } catch (err) {
    throw new GatewayError(500, `vertex key '${key.name}': auth_credentials ${(err as Error).message}`, { code: 'invalid_credentials', provider: 'vertex' });
  }
}

type GoogleAuthClient = { getAccessToken(): Promise<string | null | undefined> };
let adc: GoogleAuthClient | undefined;

async function defaultCredentialsToken(): Promise<string> {
  try {
    // Loaded on first use: most deployments never need it. google-auth-library caches and refreshes the token.
    if (!adc) {
      const { GoogleAuth } = await import('google-auth-library');
      adc = new GoogleAuth({ scopes: CLOUD_PLATFORM_SCOPE });
    }
    const token = await adc.getAccessToken();
    if (!token) throw new Error('no access token was returned');
    return token;
  } catch (err) {
    const why = 'vertex key has no auth_credentials (an API key reaches Google models only) and Application Default Credentials failed';
    throw new GatewayError(500, `${why}: ${(err as Error).message}`, {
      code: 'no_credentials',
      provider: 'vertex',
    });
  }
}
