// Points the CRDs' conversion webhook at this operator: the Service (or, outside a cluster, a URL)
// and the CA that signed the serving certificate. A CRD file cannot carry either (they depend on the
// release's namespace and on the generated certificate), and `kubectl apply` of the files puts the
// placeholder back, so every replica checks at start and then periodically, and patches only a CRD
// whose conversion differs. All replicas mount the same Secret: they agree on the value.
import { log } from '../../../proxy/src/contract.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { GROUP, KINDS } from '../resources/kinds.ts';
import { FIELD_MANAGER } from '../render/contract.ts';
import { CONVERT_PATH } from './server.ts';

export type WebhookTarget = { service: { namespace: string; name: string; port: number } } | { url: string };

export interface ConversionConfig {
  strategy: 'Webhook';
  webhook: {
    conversionReviewVersions: string[];
    clientConfig: { caBundle: string; service?: { namespace: string; name: string; path: string; port: number }; url?: string };
  };
}

/** `spec.conversion` of every CRD for this target and CA (PEM). */
export function conversionConfig(target: WebhookTarget, caPem: string): ConversionConfig {
  const caBundle = Buffer.from(caPem).toString('base64');
  const clientConfig = 'url' in target ? { caBundle, url: target.url } : { caBundle, service: { ...target.service, path: CONVERT_PATH } };
  return { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } };
}

/** Whether a CRD's current `spec.conversion` already says what `desired` says. */
export function conversionMatches(current: unknown, desired: ConversionConfig): boolean {
  const c = current as Partial<ConversionConfig> | undefined;
  const cc = c?.webhook?.clientConfig;
  const dc = desired.webhook.clientConfig;
  return (
    c?.strategy === desired.strategy &&
    JSON.stringify(c.webhook?.conversionReviewVersions) === JSON.stringify(desired.webhook.conversionReviewVersions) &&
    cc?.caBundle === dc.caBundle &&
    cc?.url === dc.url &&
    JSON.stringify(cc?.service && { namespace: cc.service.namespace, name: cc.service.name, path: cc.service.path, port: cc.service.port ?? 443 }) ===
      JSON.stringify(dc.service && { namespace: dc.service.namespace, name: dc.service.name, path: dc.service.path, port: dc.service.port })
  );
}

export const crdNames = (): string[] => KINDS.map((k) => `${k.plural}.${GROUP}`);

/**
 * Checks every CRD now and then every `intervalMs`; returns a stop function. `ca` is read on every
 * check, so a rotated CA (a renewed Secret, mounted files change) reaches the CRDs.
 */
export function keepCrdsPointed(client: KubeClient, target: WebhookTarget, ca: () => string, intervalMs: number): { stop(): void; checked: Promise<void> } {
  const missing = new Set<string>();
  const check = async (): Promise<void> => {
    let desired: ConversionConfig;
    try {
      desired = conversionConfig(target, ca());
    } catch (err) {
      log.warn('cannot read the conversion webhook CA', { error: (err as Error).message });
      return;
    }
    for (const name of crdNames()) {
      const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
      try {
        const crd = await client.get<{ spec?: { conversion?: unknown } }>(path);
        missing.delete(name);
        if (conversionMatches(crd.spec?.conversion, desired)) continue;
        // The other way of addressing the webhook is cleared (null), so a switch leaves no stale half.
        const clientConfig = { ...desired.webhook.clientConfig, service: desired.webhook.clientConfig.service ?? null, url: desired.webhook.clientConfig.url ?? null };
        await client.mergePatch(path, { spec: { conversion: { ...desired, webhook: { ...desired.webhook, clientConfig } } } }, FIELD_MANAGER);
        log.info('conversion webhook set on CRD', { crd: name, ...('url' in target ? { url: target.url } : { service: `${target.service.namespace}/${target.service.name}` }) });
      } catch (err) {
        if (isNotFound(err)) {
          if (!missing.has(name)) log.warn('CRD not installed: apply crds/ (its conversion webhook is set once it exists)', { crd: name });
          missing.add(name);
        } else log.warn('cannot set the conversion webhook on a CRD (the operator needs get and patch on it)', { crd: name, error: (err as Error).message });
      }
    }
  };
  const checked = check();
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), checked };
}
