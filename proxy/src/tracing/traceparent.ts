// W3C Trace Context (https://www.w3.org/TR/trace-context/): `traceparent` and `tracestate` read from
// a client's headers and written onto outgoing calls. Pure: strings in, strings out; a header that
// does not follow the grammar is ignored (the request starts a trace of its own), never an error.

export interface RemoteParent {
  traceId: string;
  spanId: string;
  /** Bit 0: sampled. */
  flags: number;
  /** The tracestate header as received, when it is well-formed. */
  state: string | undefined;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** tracestate: at most 32 list members of key=value, 512 characters kept (the spec's lower bound). */
const TRACESTATE_MEMBER = /^\s*[a-z0-9][a-z0-9_\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]\s*$/;

/** The parent a client's headers name, if they name one correctly. */
export function parseTraceparent(traceparent: string | string[] | undefined, tracestate: string | string[] | undefined): RemoteParent | undefined {
  // Two traceparent headers: the spec says to ignore both.
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  // Version ff is invalid; version 00 has nothing after the flags; later versions may add fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, flags: parseInt(flags, 16), state: parseTracestate(tracestate) };
}

function parseTracestate(v: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(v) ? v.join(',') : v;
  if (!joined || joined.length > 512) return undefined;
  const members = joined.split(',').filter((m) => m.trim() !== '');
  if (members.length === 0 || members.length > 32 || !members.every((m) => TRACESTATE_MEMBER.test(m))) return undefined;
  return members.map((m) => m.trim()).join(',');
}

/** The `traceparent` of a span (version 00). */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The headers that carry a span's context onto an outgoing call. */
export function traceHeaders(traceId: string, spanId: string, flags: number, state: string | undefined): Record<string, string> {
  const h: Record<string, string> = { traceparent: formatTraceparent(traceId, spanId, flags) };
  if (state) h.tracestate = state;
  return h;
}
