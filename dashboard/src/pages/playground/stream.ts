// What the playground reads from a streamed answer: the text as it grows, an in-band error, and
// the closing summary. Chat completions send `data:` chunks with deltas; the Responses API sends
// named events (`response.output_text.delta`, `response.failed`, `error`). Pure, so the page only
// renders.
import type { SseEvent } from '../../lib/sse.ts';
import type { PlaygroundSummary } from '../../../../proxy/src/api/answers.ts';

export const SUMMARY_EVENT = 'playground.summary';

export interface StreamState {
  text: string;
  error?: string;
  summary?: PlaygroundSummary;
  /** Events read (the first one is the time to first token the page can see). */
  events: number;
}

const parse = (data: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(data);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

const errorMessage = (v: Record<string, unknown>): string | undefined => {
  const e = (v.error ?? (v.response as Record<string, unknown> | undefined)?.error) as { message?: unknown } | undefined;
  return e && typeof e.message === 'string' ? e.message : undefined;
};

export function readEvent(state: StreamState, e: SseEvent): StreamState {
  if (e.data === '[DONE]') return state;
  const v = parse(e.data);
  if (!v) return state;
  if (e.event === SUMMARY_EVENT) return { ...state, summary: v as unknown as PlaygroundSummary };
  const next = { ...state, events: state.events + 1 };
  if (e.event === 'error' || e.event === 'response.failed' || (e.event === 'message' && v.error)) return { ...next, error: errorMessage(v) ?? 'the stream failed' };
  if (e.event === 'response.output_text.delta' && typeof v.delta === 'string') return { ...next, text: next.text + v.delta };
  const choices = v.choices as { delta?: { content?: unknown } }[] | undefined;
  const delta = choices?.[0]?.delta?.content;
  return typeof delta === 'string' ? { ...next, text: next.text + delta } : next;
}

/** The text of a whole (not streamed) answer of either API. */
export function answerText(response: unknown): string {
  const r = response as { choices?: { message?: { content?: unknown } }[]; output_text?: unknown; output?: { content?: { text?: unknown }[] }[] } | undefined;
  const chat = r?.choices?.[0]?.message?.content;
  if (typeof chat === 'string') return chat;
  if (typeof r?.output_text === 'string') return r.output_text;
  return (r?.output ?? []).flatMap((o) => (o.content ?? []).map((c) => (typeof c.text === 'string' ? c.text : ''))).join('');
}
