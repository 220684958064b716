// Per-request authentication for Bedrock: AWS SigV4 over the exact method, host, path and body
// (service `bedrock`, the key's region), or a Bedrock API key sent as a bearer token when the key
// has no access key. Also maps the model in the path to the key's deployment / inference profile.
import type * as SigV4 from '@smithy/signature-v4';
import type * as Sha from '@aws-crypto/sha256-js';
import { lazy } from '../../lazy.ts';
import type { ProviderKey } from '../runtime.ts';
import type { SignableRequest } from '../adapter.ts';
import { GatewayError } from '../../unified/errors.ts';

const sigv4 = lazy<typeof SigV4>('@smithy/signature-v4');
const sha256 = lazy<typeof Sha>('@aws-crypto/sha256-js');

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** SigV4-signed copy of `headers` (host is signed but left out: the HTTP client sends the same one). */
export async function sigV4Headers(req: SignableRequest, creds: AwsCredentials, region: string, signingDate?: Date): Promise<Record<string, string>> {
  const url = new URL(req.path, req.origin);
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signer = new (sigv4().SignatureV4)({ service: 'bedrock', region, credentials: creds, sha256: sha256().Sha256, uriEscapePath: true });
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers: { ...req.headers, host: url.host },
      body: req.body,
    },
    signingDate ? { signingDate } : undefined,
  );
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers)) if (k.toLowerCase() !== 'host') out[k] = String(v);
  return out;
}

/** `/model/{id}/converse[-stream]` with the key's deployment (and `arn` prefix) for that model. */
export function deploymentPath(path: string, key: ProviderKey | undefined): string {
  const cfg = key?.bedrock;
  if (!cfg?.deployments && !cfg?.arn) return path;
  return path.replace(/\/model\/([^/?]+)\//, (whole, enc: string) => {
    const model = decodeURIComponent(enc);
    const deployment = cfg.deployments?.[model];
    if (!deployment && !cfg.arn) return whole;
    const id = cfg.arn ? `${cfg.arn}/${deployment ?? model}` : (deployment as string);
    return `/model/${encodeURIComponent(id)}/`;
  });
}

export async function signBedrock(req: SignableRequest, key: ProviderKey | undefined): Promise<{ headers: Record<string, string>; path: string }> {
  const path = deploymentPath(req.path, key);
  const cfg = key?.bedrock;
  const headers = { ...req.headers, accept: 'application/json' };
  if (cfg?.access_key && cfg.secret_key) {
    const creds: AwsCredentials = { accessKeyId: cfg.access_key, secretAccessKey: cfg.secret_key };
    if (cfg.session_token) creds.sessionToken = cfg.session_token;
    return { headers: await sigV4Headers({ ...req, path, headers }, creds, cfg.region), path };
  }
  if (key?.value) return { headers: { ...headers, authorization: `Bearer ${key.value}` }, path };
  throw new GatewayError(500, 'bedrock key has neither bedrock_key_config access_key/secret_key nor an API key value', {
    code: 'no_credentials',
    provider: 'bedrock',
  });
}
