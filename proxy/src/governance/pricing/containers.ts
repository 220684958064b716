// What a container session costs. OpenAI bills Code Interpreter / hosted shell containers by
// memory tier and time: the list price is $0.03 per 20-minute session for 1 GB ($0.12 for 4 GB,
// $0.48 for 16 GB, $1.92 for 64 GB), and since 2 June 2026 it is billed per minute at the same
// rate with a 5-minute minimum (developers.openai.com/api/docs/pricing and its changelog).
// The gateway sees a container created but not how long it runs (it idles until it expires, and
// the model's tool calls use it through other requests), so a create is charged what it will
// certainly cost: the 5-minute minimum. Azure publishes no numeric price for its containers: unpriced.
import type { WireFormat } from '../../providers/catalog.ts';

/** USD per minute by memory tier (OpenAI's list price). */
const PER_MINUTE: Readonly<Record<string, number>> = { '1g': 0.03 / 20, '4g': 0.12 / 20, '16g': 0.48 / 20, '64g': 1.92 / 20 };
/** Minutes billed at least per session. */
const MINIMUM_SESSION_MINUTES = 5;

/** USD charged for one created container of `memoryLimit` on a provider of `format`; undefined when unknown. */
export function containerSessionCost(format: WireFormat, memoryLimit: string | undefined): number | undefined {
  if (format !== 'openai' || memoryLimit === undefined || !Object.hasOwn(PER_MINUTE, memoryLimit)) return undefined;
  return PER_MINUTE[memoryLimit] * MINIMUM_SESSION_MINUTES;
}
