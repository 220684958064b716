// An Azure OpenAI key's resource, compiled once per config snapshot: where the resource lives, which
// deployment serves which model, the api-version and how the key authenticates.
import type { AzureKeyConfig, ProviderConfig } from '../../schema/gateway.ts';
import type { FieldError } from '../../schema/validate.ts';

/**
 * Latest generally available dated api-version of the Azure OpenAI data-plane inference API (the
 * deployments paths). Newer features live on Azure's v1 API, which needs no api-version.
 */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

export interface AzureKey {
  /** `https://my-resource.openai.azure.com` */
  origin: string;
  /** The endpoint's own path plus `/openai`, where every Azure OpenAI path starts. */
  basePath: string;
  deployments: Readonly<Record<string, string>>;
  apiVersion: string;
  /** `Authorization: Bearer` (an Entra ID token) instead of the `api-key` header. */
  bearer: boolean;
}

export function compileAzureKey(cfg: AzureKeyConfig): AzureKey {
  const url = new URL(cfg.endpoint);
  return {
    origin: url.origin,
    basePath: `${url.pathname.replace(/\/+$/, '')}/openai`,
    deployments: cfg.deployments ?? {},
    apiVersion: cfg.api_version ?? AZURE_DEFAULT_API_VERSION,
    bearer: cfg.auth_type === 'bearer',
  };
}

/** Config rules for the `azure` provider a JSON Schema cannot say: every key needs an endpoint that parses. */
export function azureConfigErrors(at: string, p: ProviderConfig): FieldError[] {
  const errors: FieldError[] = [];
  (p.keys ?? []).forEach((k, i) => {
    const cfg = k.azure_key_config;
    if (!cfg) {
      if (!p.network_config?.base_url) {
        errors.push({ path: `${at}.keys[${i}].azure_key_config`, message: 'is required: azure has no default endpoint (or set network_config.base_url to the resource endpoint)' });
      }
      return;
    }
    try {
      const u = new URL(cfg.endpoint);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    } catch {
      errors.push({ path: `${at}.keys[${i}].azure_key_config.endpoint`, message: 'must be an absolute http(s) URL such as https://my-resource.openai.azure.com' });
    }
  });
  return errors;
}
