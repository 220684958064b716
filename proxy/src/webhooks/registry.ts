// Which dispatcher serves a database connection, so enqueueJobEvent (which gets only the driver) can
// wake it at once instead of waiting for its next poll. Keyed by driver: two gateways in one process
// have two drivers and two dispatchers.
import type { SqlDriver } from '../logs/driver.ts';

export interface Wakeable {
  wake(endpoint: string): void;
}

const dispatchers = new WeakMap<SqlDriver, Wakeable>();

export function registerDispatcher(driver: SqlDriver, d: Wakeable): void {
  dispatchers.set(driver, d);
}

export function unregisterDispatcher(driver: SqlDriver, d: Wakeable): void {
  if (dispatchers.get(driver) === d) dispatchers.delete(driver);
}

export function wakeDispatcher(driver: SqlDriver, endpoint: string): void {
  dispatchers.get(driver)?.wake(endpoint);
}
