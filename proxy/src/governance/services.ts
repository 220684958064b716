// Governance state that outlives any one snapshot: the usage counters and the model catalog.
// main() installs the Redis-backed counters when `redis` is configured; tests and single
// processes use the in-memory ones.
import type { CounterStore } from './counters/store.ts';
import { MemoryCounterStore } from './counters/memory.ts';
import { ModelCatalog } from './catalog.ts';

export interface GovernanceServices {
  counters: CounterStore;
  catalog: ModelCatalog;
}

let services: GovernanceServices | undefined;

export function governanceServices(): GovernanceServices {
  services ??= { counters: new MemoryCounterStore(), catalog: new ModelCatalog() };
  return services;
}

export function installGovernanceServices(next: GovernanceServices): void {
  services = next;
}
