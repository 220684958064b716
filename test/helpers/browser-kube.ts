// The dashboard of a gateway in Kubernetes mode: the config document rendered and applied into a
// namespace of a real kube-apiserver as the operator does, and the gateway reading it from there
// (so the dashboard is read-only and names the custom resource behind each record).
import type { Browser, Page } from 'playwright-core';
import { launchChromium, loginThroughForm } from './browser.ts';
import { startGateway, type RunningGateway } from './gateway.ts';
import type { KubeApiServer } from './kube.ts';
import { kubeList, renderConfig } from './kube-render.ts';
import { patience } from './patience.ts';

export interface KubeDashboardOptions {
  namespace: string;
  /** The config document the operator would render. */
  document: Record<string, unknown>;
  /** Values of the env.VAR references in the document (they go into the rendered Secret). */
  secrets: Record<string, string>;
  /** Config section → names of the records custom resources own. */
  managed: Record<string, string[]>;
  /** `section/name` → the custom resource it comes from (`Webhook team-a/hook`). */
  sources: Record<string, string>;
  /** Hash route to open, e.g. '#/webhooks'. */
  path: string;
  login?: { username: string; password: string };
}

export interface KubeDashboard {
  gw: RunningGateway;
  browser: Browser;
  page: Page;
  close(): Promise<void>;
}

export async function openKubeDashboard(kube: KubeApiServer, opts: KubeDashboardOptions): Promise<KubeDashboard> {
  const created = await kube.kubectl(['create', 'namespace', opts.namespace]);
  if (created.code !== 0) throw new Error(`kubectl create namespace: ${created.stderr}`);
  const rendered = renderConfig(opts.document, opts.secrets, { namespace: opts.namespace, managed: opts.managed, sources: opts.sources });
  const applied = await kube.kubectl(['apply', '--server-side', '--field-manager=skybridge-operator', '--force-conflicts', '-f', '-'], kubeList(rendered.all));
  if (applied.code !== 0) throw new Error(`kubectl apply: ${applied.stderr}`);
  // The gateway serves a dashboard built elsewhere when the test run says so (a build in progress).
  const env: NodeJS.ProcessEnv = { KUBECONFIG: kube.kubeconfig, ...(process.env.SKYBRIDGE_DASHBOARD_DIR && { SKYBRIDGE_DASHBOARD_DIR: process.env.SKYBRIDGE_DASHBOARD_DIR }) };
  const gw = await startGateway(undefined, { env, args: ['--kube-namespace', opts.namespace] });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(patience(15_000));
    await page.goto(`${gw.url}/${opts.path}`);
    if (opts.login) await loginThroughForm(page, opts.login);
    const b = browser;
    return {
      gw,
      browser: b,
      page,
      close: async () => {
        await b.close().catch(() => undefined);
        await gw.stop();
      },
    };
  } catch (err) {
    await browser?.close().catch(() => undefined);
    await gw.stop();
    throw err;
  }
}
