// Services the gateway depends on but can run without for a while (Redis, the cache's store, the
// request-log store): each registers a probe, and /health reports them, so a degraded gateway says
// what it misses instead of looking dead. A dependency registered `readiness: true` also takes the
// process out of traffic (/ready 503) while it does not answer: only the counter store, without
// which every governed request is refused (governance fails closed).
export type DependencyState = 'ok' | 'unavailable';

export interface DependencyProbe {
  state(): DependencyState;
  /** Why it is unavailable (for /ready's reason), when it is. */
  reason?(): string | undefined;
  readiness?: boolean;
}

const probes = new Map<string, DependencyProbe>();

/** Registers (or replaces) a dependency; answers a function that removes this registration. */
export function registerDependency(name: string, probe: DependencyProbe | (() => DependencyState)): () => void {
  const p = typeof probe === 'function' ? { state: probe } : probe;
  probes.set(name, p);
  return () => {
    if (probes.get(name) === p) probes.delete(name);
  };
}

/** Every registered dependency's state right now (empty when there are none). */
export function dependencyStates(): Record<string, DependencyState> {
  const out: Record<string, DependencyState> = Object.create(null) as Record<string, DependencyState>;
  for (const [name, probe] of probes) out[name] = probe.state();
  return out;
}

/** Why a dependency readiness rests on does not answer, if one does not. */
export function unreadyDependency(): string | undefined {
  for (const [name, probe] of probes) {
    if (probe.readiness && probe.state() !== 'ok') return probe.reason?.() ?? `${name} unavailable`;
  }
  return undefined;
}

/** A store that says why it does not answer (`unavailable()`), as a dependency that readiness does not rest on. */
export function registerStore(name: string, unavailable: () => string | undefined): () => void {
  return registerDependency(name, { state: () => (unavailable() === undefined ? 'ok' : 'unavailable'), reason: unavailable });
}
