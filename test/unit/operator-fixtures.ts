// Custom resources and Secrets as the API server returns them, for the operator's unit tests.
import { Buffer } from 'node:buffer';
import type { CustomResource, KindName } from '../../operator/src/resources/kinds.ts';
import type { SecretLookup } from '../../operator/src/resources/translate.ts';

let counter = 0;

export function cr(kind: KindName, name: string, spec: unknown, opts: { namespace?: string; generation?: number; created?: string } = {}): CustomResource {
  counter++;
  return {
    apiVersion: 'gateway.skybridge.dev/v1alpha1',
    kind,
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      uid: `uid-${name}-${counter}`,
      generation: opts.generation ?? 1,
      creationTimestamp: opts.created ?? '2025-01-01T00:00:00Z',
    },
    spec,
  };
}

export const ref = (name: string, key: string) => ({ secretKeyRef: { name, key } });

/** Secrets by `namespace/name`, values given as plain strings. */
export function secrets(entries: Record<string, Record<string, string>>): SecretLookup {
  const data = new Map(
    Object.entries(entries).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([kk, vv]) => [kk, Buffer.from(vv).toString('base64')]))]),
  );
  return { get: (namespace, name) => data.get(`${namespace}/${name}`) };
}

export const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A small, valid set of resources of every rendered kind. */
export function sampleResources(): CustomResource[] {
  return [
    cr('Provider', 'openai', { keys: [{ name: 'primary', valueFrom: ref('openai-creds', 'api-key'), weight: 1 }] }),
    cr('Provider', 'anthropic', { keys: [{ name: 'main', valueFrom: ref('anthropic-creds', 'key') }], network_config: { max_retries: 2 } }),
    cr('VirtualKey', 'team-a', {
      valueFrom: ref('vk-team-a', 'value'),
      provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }],
      budget: { max_limit: 10, reset_duration: '1d' },
      rateLimit: { request_max_limit: 100, request_reset_duration: '1m' },
    }),
    cr('RoutingRule', 'to-anthropic', { cel_expression: 'model == "fast"', targets: [{ provider: 'anthropic', model: 'claude-haiku-4-5', weight: 1 }] }),
  ];
}

export const sampleSecrets = (): SecretLookup =>
  secrets({
    'default/openai-creds': { 'api-key': 'sk-openai-123' },
    'default/anthropic-creds': { key: 'sk-ant-456' },
    'default/vk-team-a': { value: 'sk-bf-team-a-secret' },
  });

/** Fisher-Yates with a seeded generator, so a failure reproduces. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
