// The provider page's editable network settings (answer shapes of /api/providers:
// proxy/src/api/answers.ts; key values and credentials arrive masked or as their `env.VAR`).

/** The editable network settings: body field, label, hint. */
export const NETWORK_FIELDS = [
  ['default_request_timeout_in_seconds', 'Request timeout (s)'],
  ['max_retries', 'Max retries'],
  ['max_conns_per_host', 'Max connections per host'],
  ['stream_idle_timeout_in_seconds', 'Stream idle timeout (s)'],
] as const;
