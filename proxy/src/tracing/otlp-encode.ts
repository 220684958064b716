// Ended spans → an OTLP ExportTraceServiceRequest in protobuf, byte for byte what the SDK's
// ProtobufTraceSerializer writes (the same fields, in the same order, with the same presence rules;
// test/unit/tracing-otlp-encode.test.ts compares the two), in one pass instead of its two (a size
// estimate, then the writes), with every attribute key's bytes made once and reused, and the
// resource's and the scope's bytes made once per export. Pure: spans in, bytes out.
import type { Attributes, AttributeValue, HrTime, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Resource } from '@opentelemetry/resources';

const LEN = 2;
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
/** Attribute keys kept encoded (a KeyValue's key field): the gateway's keys are a fixed set. */
const MAX_KEYS = 1024;

class Writer {
  buf = Buffer.allocUnsafe(1 << 16);
  pos = 0;

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** A varint of a non-negative integer below 2^53, or a negative one as int64 (ten bytes). */
  varint(value: number): void {
    this.ensure(10);
    const b = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 127) {
        b[this.pos++] = (v & 127) | 128;
        v >>>= 7;
      }
      b[this.pos++] = v;
      return;
    }
    let low: number;
    let high: number;
    const abs = Math.abs(value);
    low = abs >>> 0;
    high = (abs / 4294967296) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 127) {
      b[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    b[this.pos++] = low & 127;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  /** Starts a length-delimited field's content; finish() writes its length before it. */
  start(): number {
    this.ensure(1);
    return this.pos++;
  }

  finish(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) {
      this.buf[at] = length;
      return;
    }
    const size = length < 1 << 14 ? 2 : length < 1 << 21 ? 3 : length < 1 << 28 ? 4 : 5;
    this.ensure(size - 1);
    this.buf.copyWithin(at + size, at + 1, this.pos);
    this.pos += size - 1;
    let v = length;
    for (let i = 0; i < size - 1; i++) {
      this.buf[at + i] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[at + size - 1] = v;
  }

  string(s: string): void {
    this.ensure(s.length * 3 + 5);
    const at = this.start();
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.finish(at);
  }

  /** Bytes given as hex (trace and span ids). */
  hex(id: string): void {
    this.ensure(id.length / 2 + 1);
    this.buf[this.pos++] = id.length / 2;
    this.pos += this.buf.write(id, this.pos, 'hex');
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  fixed32(v: number): void {
    this.ensure(4);
    this.pos = this.buf.writeUInt32LE(v >>> 0, this.pos);
  }

  /** [seconds, nanoseconds] as fixed64 nanoseconds. */
  time(t: HrTime): void {
    this.ensure(8);
    this.pos = this.buf.writeBigUInt64LE(BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]), this.pos);
  }

  double(v: number): void {
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(v, this.pos);
  }
}

const keyBytes = new Map<string, Buffer>();

/** A KeyValue's key field (tag, length, UTF-8), made once per key. */
function key(w: Writer, k: string): void {
  let bytes = keyBytes.get(k);
  if (!bytes) {
    const kw = new Writer();
    kw.tag(1, LEN);
    kw.string(k);
    bytes = Buffer.from(kw.buf.subarray(0, kw.pos));
    if (keyBytes.size < MAX_KEYS) keyBytes.set(k, bytes);
  }
  w.raw(bytes);
}

function attributes(w: Writer, attrs: Attributes, field: number): void {
  for (const k in attrs) {
    if (!Object.hasOwn(attrs, k)) continue;
    w.tag(field, LEN);
    const kv = w.start();
    key(w, k);
    w.tag(2, LEN);
    const v = w.start();
    anyValue(w, attrs[k]);
    w.finish(v);
    w.finish(kv);
  }
}

function anyValue(w: Writer, value: AttributeValue | Record<string, unknown> | Uint8Array | null | undefined): void {
  const t = typeof value;
  if (t === 'string') {
    w.tag(1, LEN);
    w.string(value as string);
  } else if (t === 'boolean') {
    w.tag(2, 0);
    w.varint(value ? 1 : 0);
  } else if (t === 'number') {
    const n = value as number;
    if (Number.isInteger(n) && n >= -(2 ** 63) && n < 2 ** 63) {
      w.tag(3, 0);
      w.varint(n);
    } else {
      w.tag(4, 1);
      w.double(n);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(7, LEN);
    w.varint(value.length);
    w.raw(value);
  } else if (Array.isArray(value)) {
    w.tag(5, LEN);
    const arr = w.start();
    for (const item of value) {
      w.tag(1, LEN);
      const at = w.start();
      anyValue(w, item);
      w.finish(at);
    }
    w.finish(arr);
  } else if (t === 'object' && value != null) {
    w.tag(6, LEN);
    const list = w.start();
    const obj = value as Record<string, unknown>;
    for (const k in obj) {
      if (!Object.hasOwn(obj, k)) continue;
      w.tag(1, LEN);
      const kv = w.start();
      w.tag(1, LEN);
      w.string(k);
      w.tag(2, LEN);
      const v = w.start();
      anyValue(w, obj[k] as AttributeValue);
      w.finish(v);
      w.finish(kv);
    }
    w.finish(list);
  }
}

const flags = (sc: SpanContext, parentRemote: boolean | undefined): number => (sc.traceFlags & 0xff) | HAS_IS_REMOTE | (parentRemote ? IS_REMOTE : 0);

function span(w: Writer, s: ReadableSpan): void {
  const sc = s.spanContext();
  w.tag(1, LEN);
  w.hex(sc.traceId);
  w.tag(2, LEN);
  w.hex(sc.spanId);
  const state = sc.traceState?.serialize();
  if (state) {
    w.tag(3, LEN);
    w.string(state);
  }
  const parent = s.parentSpanContext;
  if (parent?.spanId) {
    w.tag(4, LEN);
    w.hex(parent.spanId);
  }
  w.tag(5, LEN);
  w.string(s.name);
  const kind = s.kind == null ? 0 : s.kind + 1;
  if (kind !== 0) {
    w.tag(6, 0);
    w.varint(kind);
  }
  w.tag(7, 1);
  w.time(s.startTime);
  w.tag(8, 1);
  w.time(s.endTime);
  if (s.attributes) attributes(w, s.attributes, 9);
  w.tag(10, 0);
  w.varint(s.droppedAttributesCount);
  for (const e of s.events) {
    w.tag(11, LEN);
    const at = w.start();
    w.tag(1, 1);
    w.time(e.time);
    w.tag(2, LEN);
    w.string(e.name);
    if (e.attributes) attributes(w, e.attributes, 3);
    w.tag(4, 0);
    w.varint(e.droppedAttributesCount || 0);
    w.finish(at);
  }
  w.tag(12, 0);
  w.varint(s.droppedEventsCount);
  for (const l of s.links) {
    w.tag(13, LEN);
    const at = w.start();
    w.tag(1, LEN);
    w.hex(l.context.traceId);
    w.tag(2, LEN);
    w.hex(l.context.spanId);
    const ls = l.context.traceState?.serialize();
    if (ls) {
      w.tag(3, LEN);
      w.string(ls);
    }
    if (l.attributes) attributes(w, l.attributes, 4);
    w.tag(5, 0);
    w.varint(l.droppedAttributesCount || 0);
    w.tag(6, 5);
    w.fixed32(flags(l.context, l.context.isRemote));
    w.finish(at);
  }
  w.tag(14, 0);
  w.varint(s.droppedLinksCount);
  w.tag(15, LEN);
  const st = w.start();
  if (s.status.message) {
    w.tag(2, LEN);
    w.string(s.status.message);
  }
  w.tag(3, 0);
  w.varint(s.status.code);
  w.finish(st);
  w.tag(16, 5);
  w.fixed32(flags(sc, parent?.isRemote));
}

type Scope = ReadableSpan['instrumentationScope'];

function scopeField(w: Writer, scope: Scope): void {
  w.tag(1, LEN);
  const at = w.start();
  w.tag(1, LEN);
  w.string(scope.name);
  if (scope.version) {
    w.tag(2, LEN);
    w.string(scope.version);
  }
  const withAttributes = scope as Scope & { attributes?: Attributes; droppedAttributesCount?: number };
  if (withAttributes.attributes) attributes(w, withAttributes.attributes, 3);
  if (withAttributes.droppedAttributesCount) {
    w.tag(4, 0);
    w.varint(withAttributes.droppedAttributesCount);
  }
  w.finish(at);
}

function resourceField(w: Writer, resource: Resource): void {
  w.tag(1, LEN);
  const at = w.start();
  if (resource.attributes) attributes(w, resource.attributes, 1);
  w.tag(2, 0);
  w.varint(0);
  w.finish(at);
}

/** The encoder's buffer is reused from one export to the next; what it returns is a copy. */
const writer = new Writer();

/** An ExportTraceServiceRequest of `spans`, grouped by resource and scope as the SDK groups them. */
export function encodeTraceRequest(spans: readonly ReadableSpan[]): Uint8Array {
  const byResource = new Map<Resource, Map<Scope, ReadableSpan[]>>();
  for (const s of spans) {
    let scopes = byResource.get(s.resource);
    if (!scopes) byResource.set(s.resource, (scopes = new Map()));
    const list = scopes.get(s.instrumentationScope);
    if (list) list.push(s);
    else scopes.set(s.instrumentationScope, [s]);
  }
  const w = writer;
  w.pos = 0;
  for (const [resource, scopes] of byResource) {
    w.tag(1, LEN);
    const rs = w.start();
    resourceField(w, resource);
    for (const [scope, list] of scopes) {
      w.tag(2, LEN);
      const ss = w.start();
      scopeField(w, scope);
      for (const s of list) {
        w.tag(2, LEN);
        const at = w.start();
        span(w, s);
        w.finish(at);
      }
      if (scope.schemaUrl) {
        w.tag(3, LEN);
        w.string(scope.schemaUrl);
      }
      w.finish(ss);
    }
    if (resource.schemaUrl) {
      w.tag(3, LEN);
      w.string(resource.schemaUrl);
    }
    w.finish(rs);
  }
  return Uint8Array.prototype.slice.call(w.buf, 0, w.pos);
}
