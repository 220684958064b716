// A realtime session's request log: the session's own record (written by the logging stage when the
// session ends: the sums of its turns, time to first audio as its ttft, and the facts no column
// holds in its metadata) and one child record per turn, written as each turn finishes (children
// are left out of every total, as an agent's turns are).
import { randomUUID } from 'node:crypto';
import type { RequestContext } from '../pipeline/context.ts';
import type { TurnTotals } from '../pipeline/turns.ts';
import type { LogRecord } from '../logs/record.ts';
import { turnCost } from './meter.ts';
import type { TurnSummary } from './turns.ts';
import type { SessionEnd } from './session.ts';

const seconds = (s: number): string => (Math.round(s * 1000) / 1000).toString();

/** The child record of one turn. */
export function turnRecord(ctx: RequestContext, turn: TurnSummary): LogRecord {
  const usage = turn.usage;
  const record: LogRecord = {
    id: randomUUID(),
    parent_request_id: ctx.id,
    timestamp: Date.now(),
    object: 'realtime.response',
    status: turn.status === 'failed' ? 'error' : 'success',
    stream: true,
    number_of_retries: 0,
    fallback_index: ctx.fallbackIndex,
    metadata: { audio_out_seconds: seconds(turn.audioOutSeconds), ...(turn.responseId !== undefined && { response_id: turn.responseId.slice(0, 200) }), ...(turn.status !== undefined && { response_status: turn.status.slice(0, 40) }) },
  };
  if (ctx.provider !== 'none') record.provider = ctx.provider;
  if (ctx.model) record.model = ctx.model;
  if (ctx.scope.kind === 'model') record.requested_model = ctx.scope.model;
  const vk = ctx.vk;
  if (vk) {
    record.virtual_key_id = vk.record.id;
    record.virtual_key_name = vk.record.name;
  }
  if (ctx.keyId) record.selected_key_id = ctx.keyId;
  if (turn.firstAudioMs !== undefined) record.ttft = Math.round(turn.firstAudioMs * 100) / 100;
  if (usage) {
    record.prompt_tokens = usage.prompt_tokens;
    record.completion_tokens = usage.completion_tokens;
    record.total_tokens = usage.total_tokens;
    if (usage.prompt_tokens_details?.cached_tokens) record.cached_tokens = usage.prompt_tokens_details.cached_tokens;
    const cost = turnCost(ctx, usage);
    if (cost !== undefined) record.cost = cost;
  }
  return record;
}

/** What the session's own record keeps besides its columns. */
export function sessionMetadata(end: SessionEnd, session: { tracker: { audioInSeconds: number; audioOutSeconds: number } }, turns: TurnTotals | undefined): Record<string, string> {
  return {
    realtime_turns: String(turns?.turns ?? 0),
    realtime_end: end.reason,
    realtime_close_code: String(end.code),
    audio_in_seconds: seconds(session.tracker.audioInSeconds),
    audio_out_seconds: seconds(session.tracker.audioOutSeconds),
  };
}
