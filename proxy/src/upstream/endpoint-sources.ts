// Providers whose servers are found at run time (an InferencePool's endpoints) rather than at a
// configured base URL. The snapshot compiler asks here for a source per pool reference; what
// discovers endpoints (inference-pool/, which talks to the Kubernetes API) is installed by the
// gateway, so compiling a configuration never loads a Kubernetes client. Sources are process-wide,
// like the connection pools: snapshots that name the same pool share one watch and one scrape loop.
import type { InferencePoolRef } from '../schema/gateway.ts';

/** One server chosen for one request. */
export interface PickedEndpoint {
  /** `http://10.0.3.7:8000` */
  origin: string;
  /** Call once the request to it is over (answer read, abandoned or failed): it counts requests in flight. */
  release(): void;
}

export interface EndpointSource {
  /** `namespace/name`, for messages. */
  readonly id: string;
  /** A server for the next request, or why there is none (no such pool, no ready endpoint). */
  pick(): PickedEndpoint | { error: string };
}

export type EndpointDiscovery = (ref: InferencePoolRef) => EndpointSource;

let discovery: EndpointDiscovery | undefined;

/** Installed once by the gateway at start (undefined: uninstalled, when it closes). */
export function setEndpointDiscovery(next: EndpointDiscovery | undefined): void {
  discovery = next;
}

/** The source for `ref`; without discovery installed (a snapshot compiled outside a gateway) one that says so. */
export function endpointSourceFor(ref: InferencePoolRef): EndpointSource {
  if (discovery) return discovery(ref);
  const id = `${ref.namespace ?? '(default namespace)'}/${ref.name}`;
  return { id, pick: () => ({ error: `InferencePool ${id}: endpoint discovery is not running in this process` }) };
}
