// A provider as a compiled snapshot holds it (config/snapshot.ts builds it): what the adapters,
// signers and the upstream call read per request. Declared here, with the providers, so they do not
// import the config compiler for their own input type.
import type { Pool } from 'undici';
import type { BedrockKeyConfig, VertexKeyConfig } from '../schema/gateway.ts';
import type { ProviderKind } from './catalog.ts';
import type { Operation } from '../unified/operations.ts';
import type { AzureKey } from './azure/key.ts';
import type { EndpointSource } from '../upstream/endpoint-sources.ts';

export interface ProviderKey {
  /** Stable id (UUID-shaped, derived from provider and key name) so every replica agrees. */
  id: string;
  name: string;
  value: string;
  /** null: serves every model. */
  models: ReadonlySet<string> | null;
  weight: number;
  /** AWS credentials and region of a Bedrock key. */
  bedrock?: BedrockKeyConfig;
  /** Project, region and credentials of a Vertex AI key. */
  vertex?: VertexKeyConfig;
  /** Resource, deployments, api-version and auth type of an Azure OpenAI key. */
  azure?: AzureKey;
}

export interface ProviderRuntime {
  name: string;
  kind: ProviderKind;
  /** `https://api.openai.com` */
  origin: string;
  /** base_url's own path plus the API version prefix, no trailing slash: `/v1`, `/openai/v1`. */
  basePath: string;
  extraHeaders: Readonly<Record<string, string>>;
  keys: readonly ProviderKey[];
  keyless: boolean;
  operations: ReadonlySet<Operation>;
  pathOverrides: Readonly<Record<string, string>>;
  timeoutMs: number;
  streamIdleTimeoutMs: number;
  /** Largest non-streaming answer body read from the provider, in bytes. */
  maxResponseBytes: number;
  /** Largest single stream event (SSE event or event-stream frame), in bytes. */
  maxStreamEventBytes: number;
  maxRetries: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  maxConnections: number;
  /** `network_config.allow_link_local`: connections made outside the pool (realtime WebSockets) check addresses with it. */
  allowLinkLocal: boolean;
  /** Keep-alive pool to `origin` (shared with earlier snapshots for the same origin). */
  pool: Pool;
  /** `network_config.inference_pool`: each request goes to a server this source picks, not to `origin`. */
  endpoints?: EndpointSource;
  sendBackRawRequest: boolean;
  sendBackRawResponse: boolean;
  /** `passthrough_allowed_paths` as matchers (the inference paths are allowed besides). */
  passthroughPaths: readonly RegExp[];
}
