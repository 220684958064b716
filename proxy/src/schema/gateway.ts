// The config.json format, one JSON Schema per resource. These TypeBox objects are plain JSON Schema:
// ajv validates config files and /api bodies with them, `Static` derives the TypeScript types, and
// the CRD schemas are generated from them. Shapes follow the reference gateway's config so its users
// can bring their config.json unchanged.
import { Kind, Type, type Static, type TSchema } from '@sinclair/typebox';
import { AuthConfigSchema, GovernanceSchema, PricingOverrideSchema, RedisConfigSchema } from './governance.ts';
import { LogsStoreSchema } from './logs.ts';
import { VectorStoreSchema } from './cache.ts';
import { McpSectionSchema } from './mcp.ts';
import { WebhookGlobalConfigSchema, WebhooksSectionSchema } from './webhooks.ts';
import { ENV_REF_SOURCE } from './env-ref.ts';

/** A string that may be an `env.VAR` reference, resolved at load time. */
const EnvString = (opts: { minLength?: number; description?: string } = {}) => Type.String(opts);

/** AWS credentials of a Bedrock key (the reference gateway's `bedrock_key_config`). */
export const BedrockKeyConfigSchema = Type.Object(
  {
    access_key: Type.Optional(EnvString({ description: 'AWS access key id; without one, the default AWS credential chain of the gateway.' })),
    secret_key: Type.Optional(EnvString({ description: 'AWS secret access key of access_key.' })),
    session_token: Type.Optional(EnvString({ description: 'AWS session token, for temporary credentials.' })),
    region: EnvString({ minLength: 1, description: 'AWS region of the Bedrock endpoint, e.g. us-east-1.' }),
    arn: Type.Optional(EnvString({ description: 'ARN prefix: a model is addressed as <arn>/<deployment or model> (an inference profile, a provisioned model).' })),
    role_arn: Type.Optional(EnvString({ description: 'IAM role to assume. Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    external_id: Type.Optional(EnvString({ description: 'External id for role_arn. Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    session_name: Type.Optional(EnvString({ description: 'Session name for role_arn. Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    deployments: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Model name to Bedrock model id or inference profile; an unmapped model is used as it is.' })),
    batch_s3_config: Type.Optional(Type.Unknown({ description: 'S3 settings for batch jobs. Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
  },
  { additionalProperties: false, description: 'AWS region and credentials of a Bedrock key.' },
);

/** Google Cloud project, region and credentials of a Vertex AI key (the reference gateway's `vertex_key_config`). */
export const VertexKeyConfigSchema = Type.Object(
  {
    project_id: EnvString({ minLength: 1, description: 'Google Cloud project id.' }),
    project_number: Type.Optional(EnvString({ description: 'Google Cloud project number (accepted; requests address the project by project_id).' })),
    region: EnvString({ minLength: 1, description: "Vertex AI region (global, us-east5, ...): each key calls its region's host." }),
    auth_credentials: Type.Optional(EnvString({ description: 'Service-account key file JSON, or env.VAR holding it.' })),
    deployments: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Model name to Vertex AI endpoint or model id; an unmapped model is used as it is.' })),
  },
  { additionalProperties: false, description: 'Google Cloud project, region and credentials of a Vertex AI key.' },
);

/** Azure OpenAI resource of a key (the reference gateway's `azure_key_config`, plus `auth_type`). */
export const AzureKeyConfigSchema = Type.Object(
  {
    endpoint: EnvString({ minLength: 1, description: 'https://<resource>.openai.azure.com (env.VAR allowed).' }),
    deployments: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Model name to deployment name; an unmapped model is its own deployment.' })),
    api_version: Type.Optional(EnvString({ minLength: 1, description: 'Dated api-version of the deployments API (default 2024-10-21, the latest GA).' })),
    auth_type: Type.Optional(
      Type.Union([Type.Literal('api_key'), Type.Literal('bearer')], {
        description: "api_key (default): the key's value is sent as `api-key`; bearer: as `Authorization: Bearer` (a Microsoft Entra ID token).",
      }),
    ),
  },
  { additionalProperties: false, description: 'Azure OpenAI resource of the key: endpoint, deployments, api_version, auth_type.' },
);

export const ProviderKeySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, description: 'Unique within the provider.' }),
    value: EnvString({ description: 'API key, or env.VAR to read it from the environment.' }),
    models: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Models this key may serve; empty means all.' })),
    weight: Type.Optional(Type.Number({ minimum: 0, description: 'Load-balancing weight (default 1).' })),
    use_for_batch_api: Type.Optional(Type.Boolean({ description: 'Use this key for the batch API. Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    bedrock_key_config: Type.Optional(BedrockKeyConfigSchema),
    azure_key_config: Type.Optional(AzureKeyConfigSchema),
    vertex_key_config: Type.Optional(VertexKeyConfigSchema),
  },
  { additionalProperties: false },
);

/**
 * Self-hosted model servers behind a Gateway API Inference Extension InferencePool
 * (inference.networking.k8s.io/v1): the proxies read the pool's selector and target ports, follow
 * the matching EndpointSlices, and send each request to the least-loaded server (docs/kubernetes.md).
 */
export const InferencePoolRefSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$', description: 'The InferencePool name.' }),
    namespace: Type.Optional(
      Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', description: "The pool's namespace; default: a Provider resource's own namespace, else the kubeconfig's (in a pod: the pod's)." }),
    ),
    metrics_path: Type.Optional(Type.String({ pattern: '^/[^?#\\s]*$', maxLength: 256, description: "Path of the model servers' Prometheus metrics (default /metrics, as vLLM serves them)." })),
    metrics_port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Port of the metrics endpoint; default: the port each request goes to.' })),
    scrape_interval_ms: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 10000, description: 'How often each server is asked for its load (default 500); its answer counts as stale after three intervals.' }),
    ),
  },
  { additionalProperties: false, description: "Self-hosted model servers of a Gateway API Inference Extension InferencePool, instead of base_url's host: each request to the least-loaded server." },
);

export const NetworkConfigSchema = Type.Object(
  {
    base_url: Type.Optional(EnvString({ minLength: 1, description: "The provider's API address; its API version prefix (/v1, Gemini's /v1beta) is appended. Default: the provider's public API." })),
    extra_headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Headers sent with every request to the provider.' })),
    default_request_timeout_in_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Time to the response headers, and between body bytes of a JSON answer (default 30).' })),
    max_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'Retries on 429, 5xx, timeouts and broken connections, with exponential backoff and jitter (default 0).' })),
    retry_backoff_initial_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'First retry backoff in milliseconds (default 500).' })),
    retry_backoff_max_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'Largest retry backoff in milliseconds (default 5000).' })),
    stream_idle_timeout_in_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 3600, description: 'Longest silence inside a stream before it is cut (default 60).' })),
    max_conns_per_host: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: 'Size of the upstream keep-alive connection pool (default 5000).' })),
    insecure_skip_verify: Type.Optional(Type.Boolean({ description: "Do not verify the provider's TLS certificate. Accepted for compatibility with the reference gateway; not applied yet (a warning says so)." })),
    ca_cert_pem: Type.Optional(Type.String({ description: "PEM CA certificate(s) to trust for the provider. Accepted for compatibility with the reference gateway; not applied yet (a warning says so)." })),
    beta_header_overrides: Type.Optional(Type.Record(Type.String(), Type.Boolean(), { description: 'Beta header overrides. Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    allow_link_local: Type.Optional(
      Type.Boolean({ description: 'Allow base_url to reach link-local addresses and cloud metadata services (169.254.0.0/16, fe80::/10, fd00:ec2::254, metadata.google.internal); default false.' }),
    ),
    inference_pool: Type.Optional(InferencePoolRefSchema),
    // Bounds on what one upstream answer may make the gateway hold in memory (a 502 names the limit).
    max_response_body_size_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096, description: 'Largest non-streaming upstream answer read, in MiB (default 64).' })),
    max_stream_event_size_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, description: 'Largest single upstream stream event, in MiB (default 8).' })),
  },
  { additionalProperties: false, description: 'How the gateway reaches the provider: address, headers, timeouts, retries, TLS.' },
);

export const CustomProviderConfigSchema = Type.Object(
  {
    base_provider_type: Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('gemini')], { description: 'The wire format the custom provider speaks.' }),
    is_key_less: Type.Optional(Type.Boolean({ description: 'The provider takes no API key (default false).' })),
    allowed_requests: Type.Optional(Type.Record(Type.String(), Type.Boolean(), { description: 'Request type (chat_completion, embedding, ...) to whether it is allowed; an unlisted one is allowed.' })),
    request_path_overrides: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "Request type to the path used instead of the base provider's." })),
  },
  { additionalProperties: false, description: "A provider of a custom name that speaks a known provider's wire format." },
);

export const ProviderConfigSchema = Type.Object(
  {
    keys: Type.Optional(Type.Array(ProviderKeySchema, { description: 'API keys; each request picks one that admits the model, by weight.' })),
    network_config: Type.Optional(NetworkConfigSchema),
    send_back_raw_request: Type.Optional(Type.Boolean({ description: 'Add the body sent upstream to answers as extra_fields.raw_request (default false).' })),
    send_back_raw_response: Type.Optional(Type.Boolean({ description: 'Add the body received from upstream to answers as extra_fields.raw_response (default false).' })),
    store_raw_request_response: Type.Optional(Type.Boolean({ description: 'Keep the raw upstream request and response in the request log. Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    custom_provider_config: Type.Optional(CustomProviderConfigSchema),
    // Accepted for compatibility; not built yet (a warning names them).
    concurrency_and_buffer_size: Type.Optional(Type.Unknown({ description: 'Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    proxy_config: Type.Optional(Type.Unknown({ description: 'Accepted for compatibility with the reference gateway; not applied yet (a warning says so).' })),
    pricing_overrides: Type.Optional(Type.Array(PricingOverrideSchema, { description: "Prices (USD) for models of this provider, instead of the gateway's price table." })),
    // Skybridge's own: provider paths beyond the inference ones that /<provider>_passthrough may reach.
    passthrough_allowed_paths: Type.Optional(
      Type.Array(Type.String({ pattern: '^/[^?#\\s]*$', maxLength: 512 }), {
        maxItems: 100,
        description: "Paths after /<provider>_passthrough that any caller may reach besides the inference paths: '*' is one segment (or part of one), a trailing '/**' anything below.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ClientConfigSchema = Type.Object(
  {
    compat: Type.Optional(
      Type.Object({ convert_text_to_chat: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    ),
    max_request_body_size_mb: Type.Optional(Type.Integer({ minimum: 1 })),
    allowed_origins: Type.Optional(Type.Array(Type.String())),
    // Reference-gateway client settings that belong to features not built yet: accepted, warned.
    drop_excess_requests: Type.Optional(Type.Unknown()),
    initial_pool_size: Type.Optional(Type.Unknown()),
    prometheus_labels: Type.Optional(Type.Unknown()),
    enable_logging: Type.Optional(Type.Boolean({ description: 'Write a request log record per request (to logs_store, else SQLite in the app directory).' })),
    disable_content_logging: Type.Optional(Type.Boolean({ description: 'Leave request and answer content out of request logs.' })),
    disable_db_pings_in_health: Type.Optional(Type.Unknown()),
    log_retention_days: Type.Optional(Type.Integer({ minimum: 1, description: 'Days request logs are kept (default 365).' })),
    enforce_governance_header: Type.Optional(Type.Boolean({ description: 'Deprecated alias of enforce_auth_on_inference.' })),
    enforce_auth_on_inference: Type.Optional(Type.Boolean({ description: 'Inference calls need a virtual key.' })),
    enforce_scim_auth: Type.Optional(Type.Unknown()),
    allow_direct_keys: Type.Optional(Type.Unknown()),
    enable_litellm_fallbacks: Type.Optional(Type.Unknown()),
    header_filter_config: Type.Optional(Type.Unknown()),
    async_job_result_ttl: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_592_000, description: 'Seconds an async job result is kept after the job finishes (default 3600); x-bf-async-job-result-ttl overrides it per job.' })),
    async_job_config: Type.Optional(
      Type.Object(
        {
          lease_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: 'How long a replica holds a running job without renewing (default 30); another replica takes the job over once it lapses.' })),
          poll_interval_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000, description: 'How often a replica looks for jobs to run (default 1000).' })),
          max_concurrent_jobs: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, description: 'Jobs one replica runs at once (default 16).' })),
          max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Runs of a job before it is failed when every run was cut off by a dying replica (default 3).' })),
          sweep_interval_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'How often expired results are removed (default 60).' })),
          max_result_size_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, description: 'The largest result a job keeps (default 32); a larger answer fails the job with 507 result_too_large.' })),
          max_pending_jobs_per_key: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Jobs one virtual key may have waiting or running at once (default 1000); a submit over it answers 429.' })),
          max_pending_jobs: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'Jobs waiting or running in the store, all keys together (default 10000); a submit over it answers 429.' })),
          max_stored_mb_per_key: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_048_576, description: "MiB one virtual key's live jobs may keep in the store, requests and results (default 256); a submit over it answers 429." })),
          max_stored_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_485_760, description: 'MiB all live jobs may keep in the store (default 4096); a submit over it answers 429.' })),
        },
        { additionalProperties: false },
      ),
    ),
    required_headers: Type.Optional(Type.Unknown()),
    logging_headers: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }), {
        maxItems: 64,
        description: 'Request headers kept in the metadata of request log records (x-bf-lh-<name> headers are kept as <name> without being listed).',
      }),
    ),
    hide_deleted_virtual_keys_in_filters: Type.Optional(Type.Unknown()),
    allowed_headers: Type.Optional(Type.Unknown()),
    // The reference's client-level MCP settings; mcp.tool_manager_config / mcp.tool_sync_interval win.
    mcp_agent_depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Agent mode: model turns at most per request (default 10).' })),
    mcp_tool_execution_timeout: Type.Optional(Type.Integer({ minimum: 1, description: 'Seconds per MCP tool call (default 30).' })),
    mcp_code_mode_binding_level: Type.Optional(Type.Union([Type.Literal('server'), Type.Literal('tool')])),
    mcp_tool_sync_interval: Type.Optional(Type.Integer({ minimum: 0, description: 'Minutes between MCP tool list refreshes (default 10; 0: off).' })),
    webhook_config: Type.Optional(WebhookGlobalConfigSchema),
  },
  { additionalProperties: false },
);

// The `vault` section: where `vault.<path>#<field>` references are read from (a HashiCorp Vault API
// server, KV v2) and how the gateway logs in (docs/vault.md). The vault's own credentials are
// `env.VAR` references only: a literal token in config.json would be the one secret no vault guards.
const VaultEnvOnly = (what: string) => Type.String({ pattern: `^${ENV_REF_SOURCE}$`, description: `${what}: an env.VAR reference (never the value itself)` });

/**
 * One object for the three methods (a union would answer a mistake with every branch's complaint);
 * which fields each method needs is checked where the settings are read (config/vault-client.ts).
 */
export const VaultAuthSchema = Type.Object(
  {
    method: Type.Union([Type.Literal('token'), Type.Literal('approle'), Type.Literal('kubernetes')]),
    /** token: the token. */
    token: Type.Optional(VaultEnvOnly('The token')),
    /** approle: the role id and secret id. */
    role_id: Type.Optional(VaultEnvOnly('The role id')),
    secret_id: Type.Optional(VaultEnvOnly('The secret id')),
    /** kubernetes: the vault role to log in as. */
    role: Type.Optional(Type.String({ minLength: 1 })),
    /** kubernetes: the service account token the login presents (default: the pod's projected token). */
    token_path: Type.Optional(Type.String({ minLength: 1 })),
    /** approle, kubernetes: the auth mount (default: the method's name). */
    mount: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
  },
  { additionalProperties: false },
);

export const VaultConfigSchema = Type.Object(
  {
    /** The server, e.g. `https://vault.internal:8200` (default: VAULT_ADDR). */
    address: Type.Optional(Type.String({ pattern: '^https?://', description: 'http(s) URL of the Vault API server (default: the VAULT_ADDR variable)' })),
    /** Default: token auth with the VAULT_TOKEN variable. */
    auth: Type.Optional(VaultAuthSchema),
    /** The KV v2 mount the references' paths are below (default `secret`). */
    mount: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
    /** Enterprise/OpenBao namespace, sent as X-Vault-Namespace. */
    namespace: Type.Optional(Type.String({ minLength: 1 })),
    /** How long a value is served before it is read again (default 60). */
    ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
    /** One call's time limit (default 5000). */
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 60000 })),
  },
  { additionalProperties: false },
);

/** Top-level sections of the reference config that later features will own. */
export const UNBUILT_SECTIONS = [
  'framework',
  'config_store',
  'cluster_config',
  'saml_config',
  'load_balancer_config',
  'guardrails_config',
  'plugins',
  'large_payload_optimization',
] as const;

/**
 * Client settings accepted for compatibility whose feature is not built yet: those typed Unknown. (A
 * union such as mcp_code_mode_binding_level has no `type` either, and is built.)
 */
export const UNBUILT_CLIENT_FIELDS = Object.entries(ClientConfigSchema.properties)
  .filter(([, s]) => (s as TSchema)[Kind] === 'Unknown')
  .map(([k]) => k);

/**
 * `skills`: the skills repository's settings (a Skybridge extension; the skills themselves live in
 * the logs store, managed through /api/skills). Who may read the public serving routes (/skills/*),
 * the marketplace's name and owner, and the limits an upload is held to. Here rather than in a file
 * of its own: the operator loads this floor, and keeps to a small count of files.
 */
export const SkillsConfigSchema = Type.Object(
  {
    serving: Type.Optional(
      Type.Union([Type.Literal('public'), Type.Literal('virtual_key')], {
        description: "Who may read /skills/* (marketplace manifests, archives, the git repository): 'public' (default) anyone; 'virtual_key' only callers presenting an active virtual key (x-bf-vk, Bearer, x-api-key, or as the Basic password, which git sends). Management (/api/skills) always needs the management credentials.",
      }),
    ),
    marketplace_name: Type.Optional(Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 64, description: "The marketplace's name in the manifests Claude Code and Codex read (default skybridge-skills); plugins install as <skill>@<marketplace_name>." })),
    owner: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "The marketplace owner's name in the Claude Code manifest (default Skybridge)." })),
    max_files: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Files one skill may hold (default 256).' })),
    max_file_size_kb: Type.Optional(Type.Integer({ minimum: 1, maximum: 7168, description: 'KiB one file may hold (default 1024).' })),
    max_total_size_kb: Type.Optional(Type.Integer({ minimum: 1, maximum: 7168, description: "KiB all of a skill's files may hold together (default 4096); an /api body is also capped at 10 MB, and base64 content takes 4/3 of its size there." })),
  },
  { additionalProperties: false },
);

// The audit log (proxy/src/audit, docs/audit.md), in the reference gateway's shape.
export const AuditLogsConfigSchema = Type.Object(
  {
    /** Default false: audit records are written wherever a logs store is open. */
    disabled: Type.Optional(Type.Boolean({ description: 'Whether audit logging is off (default false)' })),
    /** Chains records with HMAC-SHA256 under this key instead of plain SHA-256 (env.VAR or vault reference). */
    hmac_key: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'A secret of at least 32 bytes (env.VAR or vault.<path>#<field> allowed): the chain is then HMAC-SHA256, which nobody without the key can recompute',
      }),
    ),
    retention_days: Type.Optional(Type.Integer({ minimum: 0, description: 'Days audit records are kept (default 365; 0 keeps them forever)' })),
  },
  { additionalProperties: false },
);
export type AuditLogsConfig = Static<typeof AuditLogsConfigSchema>;

const Seconds = (description: string, max = 86_400) => Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: max, description }));

/** `websocket.webrtc`: where the gateway's own WebRTC peers listen (POST /v1/realtime/calls; a Skybridge extension). */
export const WebrtcConfigSchema = Type.Object(
  {
    bind_address: Type.Optional(Type.String({ pattern: '^([0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*)$', description: 'The local IP address both legs of a call bind to and offer as their ICE candidate (default: every interface).' })),
    port_range_begin: Type.Optional(Type.Integer({ minimum: 1024, maximum: 65535, description: 'Lowest UDP port a call may use (default: any).' })),
    port_range_end: Type.Optional(Type.Integer({ minimum: 1024, maximum: 65535, description: 'Highest UDP port a call may use (default: any).' })),
  },
  { additionalProperties: false },
);

/**
 * `websocket`: the reference's section for its WebSocket gateway (realtime, Responses over
 * WebSocket), plus Skybridge's session bounds (docs/realtime.md). `transcript_buffer_size` and
 * `pool` are accepted for compatibility and not built (a warning names them).
 */
export const WebsocketConfigSchema = Type.Object(
  {
    max_connections_per_user: Type.Optional(Type.Integer({ minimum: 1, description: 'Concurrent realtime and Responses WebSocket sessions per virtual key (anonymous callers share one count). Default 100.' })),
    transcript_buffer_size: Type.Optional(Type.Integer({ minimum: 1 })),
    pool: Type.Optional(Type.Unknown()),
    idle_timeout_seconds: Seconds('A session with no event either way for this long is ended (default 300).'),
    max_session_seconds: Seconds('A session is ended after this long whatever it does (default 3600).'),
    max_event_bytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, description: 'Largest client event (one text frame), bytes (default 4 MiB).' })),
    max_buffered_bytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 256 * 1024 * 1024, description: 'Events waiting for a slow client beyond this pause reading from the provider (default 4 MiB).' })),
    backpressure_timeout_seconds: Seconds('A client that stays over max_buffered_bytes this long is disconnected (default 10).', 3600),
    webrtc: Type.Optional(WebrtcConfigSchema),
  },
  { additionalProperties: false },
);
export type WebsocketConfig = Static<typeof WebsocketConfigSchema>;

export const GatewayConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    client: Type.Optional(ClientConfigSchema),
    providers: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }), ProviderConfigSchema)),
    governance: Type.Optional(GovernanceSchema),
    /** Deprecated location of governance.auth_config, still read. */
    auth_config: Type.Optional(AuthConfigSchema),
    /** Shared state for several replicas: counters and the config store (a Skybridge extension). */
    redis: Type.Optional(RedisConfigSchema),
    /** Where request logs are kept (sqlite in the app directory, or a shared postgres). */
    logs_store: Type.Optional(LogsStoreSchema),
    /** The response cache's store (`semantic_cache` plugin): sqlite (embedded), redis (Redis Stack), postgres (pgvector). */
    vector_store: Type.Optional(VectorStoreSchema),
    /** Webhook endpoints for async jobs (reconciled by name). */
    webhooks: Type.Optional(WebhooksSectionSchema),
    /** Encrypts webhook secrets and header values the gateway stores (env.VAR allowed). */
    encryption_key: Type.Optional(Type.String({ minLength: 1, description: 'Passphrase (env.VAR allowed); an AES-256-GCM key is derived from it with scrypt.' })),
    /** MCP clients and the tool manager (proxy/src/mcp). */
    mcp: Type.Optional(McpSectionSchema),
    /** Where `vault.<path>#<field>` references are read (docs/vault.md). */
    vault: Type.Optional(VaultConfigSchema),
    /** The skills repository's serving rule, marketplace name and limits (proxy/src/skills). */
    skills: Type.Optional(SkillsConfigSchema),
    /** Realtime and Responses WebSocket sessions: the per-key cap and the session bounds (proxy/src/realtime). */
    websocket: Type.Optional(WebsocketConfigSchema),
    /** The audit log of management changes (proxy/src/audit, docs/audit.md). */
    audit_logs: Type.Optional(AuditLogsConfigSchema),
    ...Object.fromEntries(UNBUILT_SECTIONS.map((k) => [k, Type.Optional(Type.Unknown())])),
  },
  { additionalProperties: false },
);

export type ProviderKeyConfig = Static<typeof ProviderKeySchema>;
export type BedrockKeyConfig = Static<typeof BedrockKeyConfigSchema>;
export type AzureKeyConfig = Static<typeof AzureKeyConfigSchema>;
export type VertexKeyConfig = Static<typeof VertexKeyConfigSchema>;
export type NetworkConfig = Static<typeof NetworkConfigSchema>;
export type InferencePoolRef = Static<typeof InferencePoolRefSchema>;
export type ProviderConfig = Static<typeof ProviderConfigSchema>;
export type ClientConfig = Static<typeof ClientConfigSchema>;
export type GatewayConfig = Static<typeof GatewayConfigSchema>;
export type VaultAuthConfig = Static<typeof VaultAuthSchema>;
export type VaultConfig = Static<typeof VaultConfigSchema>;
export type SkillsConfig = Static<typeof SkillsConfigSchema>;
