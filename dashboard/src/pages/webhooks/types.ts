// The events, delivery states and status classes the webhooks page offers as choices (answer
// shapes: proxy/src/api/answers.ts).

export const WEBHOOK_EVENTS = ['async_job.completed', 'async_job.failed'] as const;
export const DELIVERY_STATES = ['pending', 'delivered', 'exhausted', 'discarded'] as const;
export const STATUS_CLASSES = [
  { value: '2xx', label: '2xx' },
  { value: '3xx', label: '3xx' },
  { value: '4xx', label: '4xx' },
  { value: '5xx', label: '5xx' },
  { value: 'none', label: 'No response' },
] as const;

