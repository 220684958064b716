// A config.json reload's whole-document passes in a thread of their own (read-worker.ts), started
// for the reload and gone after it: a gateway that never reloads pays nothing for it.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ReadResult } from './read-worker.ts';

// The worker file next to this one, whether running from .ts sources or the compiled .js build.
const WORKER_URL = new URL(`./read-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

export function readInThread(file: string): Promise<ReadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: { file } });
    worker.once('message', (r: ReadResult) => {
      resolve(r);
      void worker.terminate();
    });
    worker.once('error', reject);
    // After the answer this is a no-op; before it, the thread died without one.
    worker.once('exit', (code) => reject(new Error(`the config reader thread exited (code ${code}) without an answer`)));
  });
}
