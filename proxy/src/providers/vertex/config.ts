// Vertex AI keys in config.json (checked at load time, so a broken key file stops start-up instead of
// failing requests) and from plain environment variables when no config.json is given.
import { readFileSync } from 'node:fs';
import type { ProviderConfig, ProviderKeyConfig } from '../../schema/gateway.ts';
import type { FieldError } from '../../schema/validate.ts';
import { serviceAccount } from './credentials.ts';

export function vertexKeyErrors(key: ProviderKeyConfig, at: string): FieldError[] {
  const cfg = key.vertex_key_config;
  if (!cfg) return [{ path: `${at}.vertex_key_config`, message: 'is required for a vertex key (project_id, region, auth_credentials)' }];
  if (!cfg.auth_credentials) return [];
  try {
    serviceAccount(cfg.auth_credentials);
    return [];
  } catch (err) {
    return [{ path: `${at}.vertex_key_config.auth_credentials`, message: (err as Error).message }];
  }
}

/**
 * `VERTEX_PROJECT_ID` and `VERTEX_REGION` (default `us-central1`) with `VERTEX_CREDENTIALS` (the key
 * file's JSON) or the file `GOOGLE_APPLICATION_CREDENTIALS` names, else `VERTEX_API_KEY`, else
 * Application Default Credentials. `VERTEX_BASE_URL` points it elsewhere.
 */
export function vertexFromEnv(env: NodeJS.ProcessEnv): ProviderConfig | undefined {
  const project = env.VERTEX_PROJECT_ID;
  if (!project) return undefined;
  const file = env.GOOGLE_APPLICATION_CREDENTIALS;
  const credentials = env.VERTEX_CREDENTIALS || (file ? readFileSync(file, 'utf8') : undefined);
  return {
    keys: [{
      name: 'vertex-env',
      value: env.VERTEX_API_KEY ?? '',
      weight: 1,
      vertex_key_config: { project_id: project, region: env.VERTEX_REGION || 'us-central1', ...(credentials && { auth_credentials: credentials }) },
    }],
    ...(env.VERTEX_BASE_URL ? { network_config: { base_url: env.VERTEX_BASE_URL } } : {}),
  };
}
