// The CRDs from crds/ on a test API server, with their conversion webhook served from the test's own
// process (the operator's conversion code, over TLS with a test CA, at a URL the API server calls):
// v1alpha1 objects are stored as v1beta1 through it, so every test that writes either version needs
// it, whether or not an operator runs at that moment. Close it in `after`, before or after the API
// server: closing drops the API server's idle keep-alive connections to it (a close that waited for
// them, before the API server stopped, waited forever: kube-teams.test.ts was ended by the runner).
import { readFileSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseAllDocuments, stringify } from 'yaml';
import { serveConversion } from '../../operator/src/conversion/server.ts';
import { conversionConfig } from '../../operator/src/conversion/crd-config.ts';
import type { KubeApiServer } from './kube.ts';
import { makeTestCa } from './test-ca.ts';

const CRDS = new URL('../../crds/', import.meta.url).pathname;

export interface InstalledCrds {
  /** Where the API server sends ConversionReviews. */
  url: string;
  /** The CA the CRDs' caBundle holds (PEM). */
  ca: string;
  close(): Promise<void>;
}

/** The CRD documents of crds/ with `spec.conversion` set to `conversion` (YAML, one stream). */
export function crdsWithConversion(conversion: unknown): string {
  return readdirSync(CRDS)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => {
      const crd = parseAllDocuments(readFileSync(CRDS + f, 'utf8'))[0].toJS() as { spec: Record<string, unknown> };
      crd.spec.conversion = conversion;
      return stringify(crd);
    })
    .join('---\n');
}

/** Applies crds/ (server-side) with a webhook of our own, and waits until the CRDs are established. */
export async function installCrds(kube: KubeApiServer): Promise<InstalledCrds> {
  const ca = makeTestCa();
  const { cert, key } = ca.issue('conversion');
  const server = await serveConversion({ port: 0, host: '127.0.0.1', certFile: cert, keyFile: key });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/convert`;
  const ok = async (args: string[], stdin?: string) => {
    const r = await kube.kubectl(args, stdin);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  };
  try {
    await ok(['apply', '--server-side', '-f', '-'], crdsWithConversion(conversionConfig({ url }, ca.pem)));
    await ok(['wait', '--for=condition=Established', '--timeout=120s', 'crd', '--all']);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, ca: ca.pem, close };
}
