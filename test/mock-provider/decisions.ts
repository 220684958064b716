// Deterministic decision answers, shared by OpenAI's Decisions API (openai-decisions.ts) and the
// System One API (ollama.ts). The state is read as lower-case text (JSON for structured input):
// - a yes/no question is 0.92 likely when a word of its instructions (4+ letters) is in the state,
//   else 0.08;
// - a choice: the options whose label appears in the state share 0.9 (the rest 0.1); none: even;
// - a score: the level whose label appears in the state gets 0.85 (the rest share 0.15); none: even;
// - instructions containing REFUSE are not answered.
// Tokens are whitespace-separated words of the state and the instructions.

export interface Distribution {
  /** Probability per option, in the options' order. */
  probs: number[];
  /** Index of the most likely option (the first on a tie). */
  pick: number;
  confidence: number;
}

export const lower = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v)).toLowerCase();

export const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

export function refuses(instructions: unknown): boolean {
  return lower(instructions).includes('refuse');
}

export function yesProbability(state: string, instructions: unknown): number {
  const terms = lower(instructions).match(/[a-z]{4,}/g) ?? [];
  return terms.some((t) => state.includes(t)) ? 0.92 : 0.08;
}

function spread(hits: boolean[], share: number): number[] {
  const n = hits.filter(Boolean).length;
  if (n === 0 || n === hits.length) return hits.map(() => 1 / hits.length);
  return hits.map((h) => (h ? share / n : (1 - share) / (hits.length - n)));
}

function distribution(probs: number[]): Distribution {
  const rounded = probs.map((p) => Math.round(p * 10000) / 10000);
  const pick = rounded.indexOf(Math.max(...rounded));
  return { probs: rounded, pick, confidence: rounded[pick] };
}

export function choose(state: string, labels: string[]): Distribution {
  return distribution(spread(labels.map((l) => state.includes(l.toLowerCase())), 0.9));
}

export function rate(state: string, levels: string[]): Distribution {
  const hit = levels.findIndex((l) => state.includes(l.toLowerCase()));
  return distribution(hit < 0 ? levels.map(() => 1 / levels.length) : levels.map((_, i) => (i === hit ? 0.85 : 0.15 / (levels.length - 1))));
}

/** The expected level index. */
export function expected(probs: number[]): number {
  return Math.round(probs.reduce((s, p, i) => s + p * i, 0) * 10000) / 10000;
}
