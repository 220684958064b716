// The seam with async jobs (proxy/src/async): at submit, checkWebhookForSubmit refuses a job naming
// a missing or disabled endpoint; when the job finishes, enqueueJobEvent stores the delivery (durable
// once it resolves) if the endpoint is enabled and subscribed to the event at that moment.
import type { Snapshot } from '../config/snapshot.ts';
import type { SqlDriver } from '../logs/driver.ts';
import { GatewayError } from '../unified/errors.ts';
import { webhookEndpoint } from './endpoints.ts';
import { storedData } from './payload.ts';
import { DeliveryQueue, jobDeliveryId, type JobOutcome } from './queue.ts';
import { wakeDispatcher } from './registry.ts';
import { BF_HEADERS } from '../bf-headers.ts';

export const WEBHOOK_HEADER = BF_HEADERS.asyncWebhook.name;

export interface JobEvent {
  endpoint: string;
  event: 'async_job.completed' | 'async_job.failed';
  job: JobOutcome;
}

/**
 * Stores the delivery of a finished job's event, unless the endpoint is gone, disabled or not
 * subscribed. Idempotent per (endpoint, event, job id).
 */
export async function enqueueJobEvent(driver: SqlDriver, snapshot: Snapshot, ev: JobEvent): Promise<'queued' | 'skipped'> {
  const ep = webhookEndpoint(snapshot, ev.endpoint);
  if (!ep || ep.settings.disabled || !ep.settings.events.includes(ev.event)) return 'skipped';
  const s = ep.settings;
  // The id is derived from (endpoint, event, job): enqueueing the same event again (a worker
  // recovering a job whose hand-off it cannot confirm) stores nothing new and sends one webhook-id.
  const id = jobDeliveryId(ev.endpoint, ev.event, ev.job.id);
  await new DeliveryQueue(driver).add({ endpoint: ev.endpoint, event: ev.event, data: storedData(ev.job, s.include_response, s.max_response_payload_kbs) }, Date.now(), id);
  wakeDispatcher(driver, ev.endpoint);
  return 'queued';
}

/**
 * Why a submit naming `name` in x-bf-async-webhook is refused (400, before any job is stored), or
 * undefined when the endpoint exists and is enabled.
 */
export function checkWebhookForSubmit(snapshot: Snapshot, name: string): GatewayError | undefined {
  const ep = webhookEndpoint(snapshot, name);
  const why = !ep ? 'does not exist' : ep.settings.disabled ? 'is disabled' : undefined;
  if (!why) return undefined;
  return new GatewayError(400, `webhook endpoint '${name.slice(0, 256)}' named in ${WEBHOOK_HEADER} ${why}: the job was not accepted`, { param: WEBHOOK_HEADER, code: 'invalid_webhook' });
}
