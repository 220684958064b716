// Waiting for an upstream body's first bytes without consuming them, so whoever reads the body
// next still gets every byte.
import type { Readable } from 'node:stream';

/** Resolves once data (or the end) is readable; rejects when the body fails first (a reset). */
export function firstBytes(body: Readable): Promise<void> {
  if (body.readableLength > 0 || body.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      body.off('readable', onReadable);
      body.off('error', done);
      body.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onReadable = () => done();
    // A body destroyed without an error event (an abort) would otherwise never settle.
    const onClose = () => done(body.errored ?? new Error('upstream body closed before any data'));
    body.once('readable', onReadable);
    body.once('error', done);
    body.once('close', onClose);
  });
}
