// The webhook endpoints of a snapshot, resolved once per snapshot: defaults filled in, header values
// decrypted. `env.VAR` references were resolved when the document was loaded (config/load.ts).
import type { Snapshot } from '../config/snapshot.ts';
import { withDefaults, type WebhookEndpoint, type WebhookSettings } from '../schema/webhooks.ts';
import { unseal } from './crypto.ts';

export interface ResolvedEndpoint {
  settings: WebhookSettings;
  /** Header values to send (decrypted), or why they cannot be read. */
  headers: Record<string, string>;
  problem?: string;
  /** The secret from the configuration (config.json, env.VAR, a Kubernetes Secret), if any. */
  configSecret?: string;
}

const cache = new WeakMap<Snapshot, Map<string, ResolvedEndpoint>>();

export function encryptionKey(snapshot: Snapshot): string | undefined {
  const k = (snapshot.config as { encryption_key?: unknown }).encryption_key;
  return typeof k === 'string' && k !== '' ? k : undefined;
}

export function configuredWebhooks(snapshot: Snapshot): WebhookEndpoint[] {
  const list = (snapshot.config as { webhooks?: WebhookEndpoint[] }).webhooks;
  return Array.isArray(list) ? list : [];
}

export function webhookEndpoints(snapshot: Snapshot): Map<string, ResolvedEndpoint> {
  let map = cache.get(snapshot);
  if (!map) {
    map = new Map();
    const key = encryptionKey(snapshot);
    for (const e of configuredWebhooks(snapshot)) {
      const headers: Record<string, string> = {};
      let problem: string | undefined;
      for (const [name, value] of Object.entries(e.headers ?? {})) {
        try {
          headers[name] = unseal(value, key);
        } catch (err) {
          problem = `header ${name}: ${(err as Error).message}`;
        }
      }
      map.set(e.name, { settings: withDefaults(e), headers, ...(problem && { problem }), ...(e.secret && { configSecret: e.secret }) });
    }
    cache.set(snapshot, map);
  }
  return map;
}

export function webhookEndpoint(snapshot: Snapshot, name: string): ResolvedEndpoint | undefined {
  return webhookEndpoints(snapshot).get(name);
}

/**
 * Why nothing may be sent to this endpoint now, or undefined. An endpoint that may reach the private
 * network is a way to probe it for whoever can write /api; without dashboard authentication that is
 * anyone on loopback, so its deliveries wait for authentication to be configured. Checked when each
 * delivery is sent (a test, a redelivery, an async job's event, a URL changed after queuing), not
 * only when it was queued.
 */
export function privateReceiverRefusal(snapshot: Snapshot, name: string, settings: Pick<WebhookSettings, 'allow_private_network'>): string | undefined {
  if (!settings.allow_private_network || snapshot.governance.auth?.is_enabled === true) return undefined;
  return `deliveries to webhook '${name}' (allow_private_network) need dashboard authentication: set governance.auth_config.is_enabled with admin credentials`;
}
