// Shapes of /api/webhooks answers (proxy/src/api/webhooks.ts), as the webhooks page reads them.

export const WEBHOOK_EVENTS = ['async_job.completed', 'async_job.failed'] as const;
export const DELIVERY_STATES = ['pending', 'delivered', 'exhausted', 'discarded'] as const;
export const STATUS_CLASSES = [
  { value: '2xx', label: '2xx' },
  { value: '3xx', label: '3xx' },
  { value: '4xx', label: '4xx' },
  { value: '5xx', label: '5xx' },
  { value: 'none', label: 'No response' },
] as const;

export interface Webhook {
  id: string;
  name: string;
  url: string;
  events: string[];
  headers: Record<string, string>;
  include_response: boolean;
  allow_private_network: boolean;
  disabled: boolean;
  max_retries: number;
  retry_backoff_initial_seconds: number;
  retry_backoff_max_seconds: number;
  attempt_timeout_seconds: number;
  max_response_payload_kbs: number;
  max_concurrent_deliveries: number;
  /** Where the signing secret comes from: generated (rotatable here), config.json, or an env variable. */
  secret_source: 'generated' | 'config' | 'env';
  status: 'active' | 'disabled';
  managed_by?: string;
  source?: string;
}

export interface Attempt {
  send: number;
  attempt: number;
  started_at?: string;
  duration_ms: number | null;
  status_code: number | null;
  outcome: 'success' | 'failure';
  error?: string;
  response_body?: string;
  node?: string;
}

export interface Delivery {
  id: string;
  webhook: string;
  event: string;
  request_id: string;
  state: (typeof DELIVERY_STATES)[number];
  sends: number;
  attempt_count: number;
  next_attempt_at?: string;
  last_status_code: number | null;
  last_error: string | null;
  created_at?: string;
  updated_at?: string;
  attempts: Attempt[];
}

export interface DeliveryPage {
  deliveries: Delivery[];
  total_count: number;
  limit: number;
  offset: number;
}
