// Ended spans → an OTLP ExportTraceServiceRequest in protobuf, byte for byte what the SDK's
// ProtobufTraceSerializer writes (the same fields, in the same order, with the same presence rules;
// test/unit/tracing-otlp-encode.test.ts compares the two), in one pass instead of its two (a size
// estimate, then the writes), with every attribute key's bytes made once and reused, and the
// resource's and the scope's bytes made once per export. Pure: spans in, bytes out.
import type { Attributes, AttributeValue, HrTime, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Resource } from '@opentelemetry/resources';
import type { AttributeSink } from './attribute-sink.ts';
import { LeanSpan } from './tracer.ts';

const LEN = 2;
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
/** Attribute keys kept encoded (a KeyValue's key field): the gateway's keys are a fixed set. */
const MAX_KEYS = 1024;
/** Strings shorter than this are written by hand when ASCII (Buffer.write's call costs more than the copy). */
const SHORT = 128;

/** A hex digit's value by its char code; -1: not a hex digit. */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

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
    const v = (field << 3) | wire;
    if (v > 127) return this.varint(v);
    this.ensure(1);
    this.buf[this.pos++] = v;
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
    const n = s.length;
    this.ensure(n * 3 + 5);
    if (n < SHORT) {
      const b = this.buf;
      let p = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 127) break;
        b[p++] = c;
      }
      if (i === n) {
        b[this.pos] = n;
        this.pos = p;
        return;
      }
    }
    const at = this.start();
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.finish(at);
  }

  /** Bytes given as hex (trace and span ids). */
  hex(id: string): void {
    const n = id.length >>> 1;
    this.ensure(n + 1);
    const b = this.buf;
    const at = this.pos;
    b[at] = n;
    let bad = 0;
    for (let i = 0, p = at + 1; i < n; i++) {
      const hi = HEX[id.charCodeAt(2 * i)] ?? -1;
      const lo = HEX[id.charCodeAt(2 * i + 1)] ?? -1;
      bad |= hi | lo;
      b[p++] = (hi << 4) | lo;
    }
    if (bad >= 0) {
      this.pos = at + 1 + n;
      return;
    }
    // Not hex all through: as Buffer.write does (the bytes up to the first bad digit).
    this.buf[this.pos++] = id.length / 2;
    this.pos += this.buf.write(id, this.pos, 'hex');
  }

  raw(bytes: Uint8Array): void {
    const n = bytes.length;
    this.ensure(n);
    if (n < 32) {
      const b = this.buf;
      let p = this.pos;
      for (let i = 0; i < n; i++) b[p++] = bytes[i]!;
      this.pos = p;
      return;
    }
    this.buf.set(bytes, this.pos);
    this.pos += n;
  }

  fixed32(v: number): void {
    this.ensure(4);
    this.#u32(v >>> 0);
  }

  #u32(v: number): void {
    const b = this.buf;
    const p = this.pos;
    b[p] = v & 255;
    b[p + 1] = (v >>> 8) & 255;
    b[p + 2] = (v >>> 16) & 255;
    b[p + 3] = v >>> 24;
    this.pos = p + 4;
  }

  /**
   * [seconds, nanoseconds] as fixed64 nanoseconds, in doubles without a BigInt: seconds split in
   * 16-bit halves keep every product below 2^53.
   */
  time(t: HrTime): void {
    const s = t[0];
    const ns = t[1];
    if (!(s >= 0 && s < 4294967296 && Number.isInteger(s) && ns >= 0 && Number.isInteger(ns))) {
      this.ensure(8);
      this.pos = this.buf.writeBigUInt64LE(BigInt(s) * 1_000_000_000n + BigInt(ns), this.pos);
      return;
    }
    // s * 1e9 + ns = hiProduct * 2^16 + loSum
    const hiProduct = (s >>> 16) * 1e9;
    const loSum = (s & 0xffff) * 1e9 + ns;
    const hiLow16 = hiProduct % 65536;
    const low = hiLow16 * 65536 + loSum;
    const lowWord = low % 4294967296;
    const highWord = (hiProduct - hiLow16) / 65536 + Math.floor(low / 4294967296);
    this.ensure(8);
    this.#u32(lowWord);
    this.#u32(highWord);
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
    if (Object.hasOwn(attrs, k)) keyValue(w, field, k, attrs[k]);
  }
}

function keyValue(w: Writer, field: number, k: string, value: AttributeValue | undefined): void {
  w.tag(field, LEN);
  const kv = w.start();
  key(w, k);
  w.tag(2, LEN);
  const v = w.start();
  anyValue(w, value);
  w.finish(v);
  w.finish(kv);
}

/** Values kept encoded per key, and in all: a key whose values do not repeat (a request id) stops after 32. */
const MAX_VALUES_PER_KEY = 32;
const MAX_VALUES = 4096;

/**
 * A span's attributes (field 9) written as its record gives them, with no attribute object between.
 * Most of the gateway's attributes repeat from span to span (operation, provider, model, path,
 * status): a string, boolean or integer value's whole KeyValue field is kept encoded and copied.
 */
class SpanAttributes implements AttributeSink {
  readonly #w: Writer;
  readonly #encoded = new Map<string, Map<AttributeValue, Buffer>>();
  #count = 0;

  constructor(w: Writer) {
    this.#w = w;
  }

  set(k: string, value: AttributeValue): void {
    const w = this.#w;
    const t = typeof value;
    // Long strings are not kept: they do not repeat, and captured content must not outlive its export.
    if (t === 'string' ? (value as string).length > SHORT : t !== 'boolean' && !(t === 'number' && Number.isInteger(value))) return keyValue(w, 9, k, value);
    let values = this.#encoded.get(k);
    const known = values?.get(value);
    if (known) return w.raw(known);
    const at = w.pos;
    keyValue(w, 9, k, value);
    if (this.#count >= MAX_VALUES || (values && values.size >= MAX_VALUES_PER_KEY)) return;
    if (!values) this.#encoded.set(k, (values = new Map()));
    values.set(value, Buffer.from(w.buf.subarray(at, w.pos)));
    this.#count++;
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

function span(w: Writer, s: ReadableSpan, sink: AttributeSink): void {
  // The gateway's own spans: name and attributes straight from their record (nothing settled).
  const record = s instanceof LeanSpan ? s.writable : undefined;
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
  w.string(record ? (record.spanName() ?? (s as LeanSpan).ownName) : s.name);
  const kind = s.kind == null ? 0 : s.kind + 1;
  if (kind !== 0) {
    w.tag(6, 0);
    w.varint(kind);
  }
  w.tag(7, 1);
  w.time(s.startTime);
  w.tag(8, 1);
  w.time(s.endTime);
  if (record) record.write(sink);
  else if (s.attributes) attributes(w, s.attributes, 9);
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
const spanAttributes = new SpanAttributes(writer);

/** An ExportTraceServiceRequest of `spans`, grouped by resource and scope as the SDK groups them. */
export function encodeTraceRequest(spans: readonly ReadableSpan[]): Uint8Array {
  const w = writer;
  w.pos = 0;
  for (const [resource, scopes] of grouped(spans)) {
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
        span(w, s, spanAttributes);
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

/** Spans by resource, then scope, in the order first seen (a batch of one tracer's spans: one group, no map filled). */
function grouped(spans: readonly ReadableSpan[]): Map<Resource, Map<Scope, readonly ReadableSpan[]>> {
  const resource = spans[0]?.resource;
  const scope = spans[0]?.instrumentationScope;
  let same = true;
  for (const s of spans) {
    if (s.resource !== resource || s.instrumentationScope !== scope) {
      same = false;
      break;
    }
  }
  if (same) return resource && scope ? new Map([[resource, new Map([[scope, spans]])]]) : new Map();
  const byResource = new Map<Resource, Map<Scope, ReadableSpan[]>>();
  for (const s of spans) {
    let scopes = byResource.get(s.resource);
    if (!scopes) byResource.set(s.resource, (scopes = new Map()));
    const list = scopes.get(s.instrumentationScope);
    if (list) list.push(s);
    else scopes.set(s.instrumentationScope, [s]);
  }
  return byResource;
}
