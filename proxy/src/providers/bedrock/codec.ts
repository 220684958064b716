// The AWS event-stream codec (the one the SDKs decode with), loaded on first Bedrock stream.
import type * as Codec from '@smithy/eventstream-codec';
import { lazy } from '../../lazy.ts';

const codecModule = lazy<typeof Codec>('@smithy/eventstream-codec');

export const toUtf8 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
export const fromUtf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));

let shared: Codec.EventStreamCodec | undefined;

/** The codec keeps no state between messages, so one serves every stream. */
export function eventStreamCodec(): Codec.EventStreamCodec {
  return (shared ??= new (codecModule().EventStreamCodec)(toUtf8, fromUtf8));
}
