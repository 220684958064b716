// Budgets and rate limits for MCP tool calls. The limits are the caller's own: its virtual key's,
// its team's and its customer's (provider and model limits are about inference, not tools).
//   - A call the caller makes directly (/mcp tools/call, POST /v1/mcp/tool/execute) is admitted as
//     one request against their request rate limits and must find their budgets not exhausted
//     (429 / 402 otherwise, nothing runs). Token limits do not apply: a tool call uses no tokens.
//   - Every successful call (agent and code mode included) charges the client's tool_pricing for
//     the tool to those budgets. Agent-mode calls are not admitted on their own: the model turn
//     that asked for them was admitted through the limits stage, and the next turn is again.
import type { Snapshot } from '../config/snapshot.ts';
import type { CounterStore } from '../governance/counters/store.ts';
import type { EventHub } from '../logs/live-events.ts';
import { budgetLimit, rateLimits, type AppliedLimit } from '../governance/limits.ts';
import { limitError } from '../governance/stages.ts';
import type { VirtualKeyRuntime } from '../config/governance-runtime.ts';
import { log } from '../log.ts';
import type { ToolGovernance } from './manager.ts';

function callerLimits(snapshot: Snapshot, vk: VirtualKeyRuntime): AppliedLimit[] {
  const rt = snapshot.governance;
  const out = new Map<string, AppliedLimit>();
  for (const level of [vk.record, vk.team, vk.customer]) {
    if (!level) continue;
    const b = level.budget_id ? rt.budgets.get(level.budget_id) : undefined;
    if (b) out.set(`budget:${b.id}`, budgetLimit(b));
    const r = level.rate_limit_id ? rt.rateLimits.get(level.rate_limit_id) : undefined;
    if (r) for (const l of rateLimits(r)) if (l.kind === 'requests') out.set(l.key, l);
  }
  return [...out.values()];
}

/** The governance of one caller's tool calls, or undefined when it has no limits (no key, none configured). */
export function toolGovernance(snapshot: Snapshot, vk: VirtualKeyRuntime | undefined, services: { counters: CounterStore; events?: EventHub }): ToolGovernance | undefined {
  const { counters, events } = services;
  if (!vk || !snapshot.governance.hasLimits) return undefined;
  const limits = callerLimits(snapshot, vk);
  if (limits.length === 0) return undefined;
  const budgets = limits.filter((l) => l.kind === 'budget');
  return {
    admit: async () => {
      const verdict = await counters.admit(limits, Date.now());
      if (!verdict.ok) throw limitError(limits[verdict.index], verdict.retryAfterMs);
    },
    charge: (cost) => {
      if (!(cost > 0) || budgets.length === 0) return;
      const adds = budgets.map((limit) => ({ limit, amount: cost }));
      // The dashboard's budget threshold notifications, as for inference charges.
      const crossed = events?.budgetWatch(adds, counters);
      counters.record(adds, Date.now()).then(crossed, (err: unknown) => log.error('could not record MCP tool cost against budgets', { error: (err as Error).message }));
    },
  };
}
