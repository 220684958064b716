// Services the gateway depends on but can run without for a while (Redis): each registers a probe,
// and /health reports them, so a degraded gateway says what it misses instead of looking dead.
export type DependencyState = 'ok' | 'unavailable';

const probes = new Map<string, () => DependencyState>();

export function registerDependency(name: string, probe: () => DependencyState): void {
  probes.set(name, probe);
}

/** Every registered dependency's state right now (empty when there are none). */
export function dependencyStates(): Record<string, DependencyState> {
  const out: Record<string, DependencyState> = Object.create(null) as Record<string, DependencyState>;
  for (const [name, probe] of probes) out[name] = probe();
  return out;
}
