// Services the gateway depends on but can run without for a while (Redis, the cache's store, the
// request-log store): each registers a probe, and /health reports them, so a degraded gateway says
// what it misses instead of looking dead. A dependency registered `readiness: true` also takes the
// process out of traffic (/ready 503) while it does not answer: only the counter store, without
// which every governed request is refused (governance fails closed). One set per gateway (on its
// services), so two gateways in one process report their own.
export type DependencyState = 'ok' | 'unavailable';

export interface DependencyProbe {
  state(): DependencyState;
  /** Why it is unavailable (for /ready's reason), when it is. */
  reason?(): string | undefined;
  readiness?: boolean;
}

export class Dependencies {
  readonly #probes = new Map<string, DependencyProbe>();

  register(name: string, probe: DependencyProbe): void {
    this.#probes.set(name, probe);
  }

  /** A store that says why it does not answer (`unavailable()`), as a dependency readiness does not rest on. */
  registerStore(name: string, unavailable: () => string | undefined): void {
    this.register(name, { state: () => (unavailable() === undefined ? 'ok' : 'unavailable'), reason: unavailable });
  }

  /** Every registered dependency's state right now (empty when there are none). */
  states(): Record<string, DependencyState> {
    const out: Record<string, DependencyState> = Object.create(null) as Record<string, DependencyState>;
    for (const [name, probe] of this.#probes) out[name] = probe.state();
    return out;
  }

  /** Why a dependency readiness rests on does not answer, if one does not. */
  unready(): string | undefined {
    for (const [name, probe] of this.#probes) {
      if (probe.readiness && probe.state() !== 'ok') return probe.reason?.() ?? `${name} unavailable`;
    }
    return undefined;
  }
}
