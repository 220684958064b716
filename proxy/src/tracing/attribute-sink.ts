// Where a span record's attributes go when they are made: into an attribute object (the SDK's
// readers: `ReadableSpan.attributes`), or straight into the OTLP encoder at export (otlp-encode.ts),
// with no object in between. The record writes each key once, in its order; both sinks keep it.
import type { Attributes, AttributeValue } from '@opentelemetry/api';

export interface AttributeSink {
  set(key: string, value: AttributeValue): void;
}

/** Sets each attribute on an object. */
export class ObjectSink implements AttributeSink {
  readonly into: Attributes;

  constructor(into: Attributes) {
    this.into = into;
  }

  set(key: string, value: AttributeValue): void {
    this.into[key] = value;
  }
}
