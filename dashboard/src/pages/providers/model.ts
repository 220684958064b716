// Shapes of /api/providers answers. Key values and credentials arrive masked (`sk-...abcd`,
// `<redacted>`) or as the `env.VAR` they are read from; the page never has the real value.
export interface ProviderKey {
  id: string;
  name: string;
  value: string;
  models?: string[];
  weight?: number;
  enabled?: boolean;
  use_for_batch_api?: boolean;
  [other: string]: unknown;
}

export interface NetworkConfig {
  base_url?: string;
  extra_headers?: Record<string, string>;
  default_request_timeout_in_seconds?: number;
  max_retries?: number;
  retry_backoff_initial_ms?: number;
  retry_backoff_max_ms?: number;
  stream_idle_timeout_in_seconds?: number;
  max_conns_per_host?: number;
  [other: string]: unknown;
}

export interface Provider {
  name: string;
  keys: ProviderKey[];
  network_config?: NetworkConfig;
  custom_provider_config?: { base_provider_type: string; is_key_less?: boolean };
  concurrency_and_buffer_size?: unknown;
  pricing_overrides?: unknown[];
  managed_by?: string;
  source?: string;
  [other: string]: unknown;
}

/** The editable network settings: body field, label, hint. */
export const NETWORK_FIELDS = [
  ['default_request_timeout_in_seconds', 'Request timeout (s)'],
  ['max_retries', 'Max retries'],
  ['max_conns_per_host', 'Max connections per host'],
  ['stream_idle_timeout_in_seconds', 'Stream idle timeout (s)'],
] as const;
