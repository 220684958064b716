// Webhook delivery on this node: the dispatcher over the logs store's database, and the sweeper that
// keeps the delivery history within client.webhook_config.delivery_history_retention_days.
import type { SnapshotHolder } from '../config/holder.ts';
import type { SqlDriver } from '../logs/driver.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { log } from '../log.ts';
import { Dispatcher, type DeliveryWatcher } from './dispatcher.ts';
import { DEFAULT_HISTORY_RETENTION_DAYS } from '../schema/webhooks.ts';

const SWEEP_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface Webhooks {
  dispatcher: Dispatcher;
  stop(): Promise<void>;
}

export async function startWebhooks(driver: SqlDriver, holder: Pick<SnapshotHolder, 'current'>, metrics?: Metrics, env: NodeJS.ProcessEnv = process.env, watch?: DeliveryWatcher): Promise<Webhooks> {
  const poll = Number(env.SKYBRIDGE_WEBHOOK_POLL_MS);
  const dispatcher = new Dispatcher(driver, () => holder.current(), { metrics, ...(watch && { watch }), ...(Number.isInteger(poll) && poll > 0 && { pollMs: poll }) }).start();
  const sweep = async () => {
    const days = holder.current().config.client?.webhook_config?.delivery_history_retention_days ?? DEFAULT_HISTORY_RETENTION_DAYS;
    try {
      const n = await dispatcher.queue.deleteFinishedBefore(Date.now() - days * DAY_MS);
      if (n > 0) log.info('webhook delivery history trimmed', { deleted: n, retention_days: days });
    } catch (err) {
      log.warn('webhook delivery history could not be trimmed', { error: (err as Error).message });
    }
  };
  await sweep();
  const timer = setInterval(() => void sweep(), SWEEP_EVERY_MS).unref();
  return {
    dispatcher,
    stop: async () => {
      clearInterval(timer);
      await dispatcher.stop();
    },
  };
}
