// Worker thread of the code-mode sandbox: instantiates starlark.wasm once (a WASI reactor) and runs one
// execution per message. A tool call blocks this thread on Atomics.wait while the main thread awaits
// the MCP call, then reads the answer synchronously from the reply port.
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';

export interface WorkerInit {
  module: WebAssembly.Module;
  /** Int32 slot 0: 0 while a tool call is pending, 1 once its answer is on the reply port. */
  control: SharedArrayBuffer;
  replies: MessagePort;
}

/** Messages to the main thread. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'call'; payload: string }
  | { type: 'print'; line: string }
  | { type: 'done'; output: string; memoryBytes: number }
  | { type: 'crashed'; message: string };

interface SandboxExports {
  memory: WebAssembly.Memory;
  input(n: number): number;
  run(n: number): number;
  output(): number;
}

const init = workerData as WorkerInit;
const port = parentPort!;
const post = (message: WorkerMessage): void => port.postMessage(message);

// node:wasi announces itself as experimental once per thread; the gateway uses it on purpose.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (text.includes('WASI')) return;
  (emitWarning as (w: string | Error, ...r: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;
const { WASI } = await import('node:wasi');

const control = new Int32Array(init.control);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
let pending = new Uint8Array(0);
// The Go runtime reports fatal errors (out of memory) on stderr; keep the start for the crash report.
let stderrHead = '';

// Set once the instance exists; the imports only run after that.
const guest: { memory?: WebAssembly.Memory } = {};
const buffer = (): ArrayBuffer => guest.memory!.buffer;
const bytesAt = (ptr: number, length: number): Uint8Array => new Uint8Array(buffer(), ptr >>> 0, length);

// No preopened directories, no arguments, no environment: the guest sees no file system.
const wasi = new WASI({ version: 'preview1', args: [], env: { GOTRACEBACK: 'none' }, returnOnExit: true });
const imports = wasi.getImportObject() as { wasi_snapshot_preview1: Record<string, unknown> };
const wasiFdWrite = imports.wasi_snapshot_preview1.fd_write as (fd: number, iovs: number, count: number, written: number) => number;
imports.wasi_snapshot_preview1.fd_write = (fd: number, iovs: number, count: number, written: number): number => {
  if (fd !== 1 && fd !== 2) return wasiFdWrite(fd, iovs, count, written);
  const view = new DataView(buffer());
  let total = 0;
  for (let i = 0; i < count; i++) {
    const ptr = view.getUint32(iovs + i * 8, true);
    const len = view.getUint32(iovs + i * 8 + 4, true);
    if (stderrHead.length < 2000) stderrHead += decoder.decode(bytesAt(ptr, len)).slice(0, 2000);
    total += len;
  }
  view.setUint32(written, total, true);
  return 0;
};

const skybridge = {
  call(ptr: number, length: number): number {
    const payload = decoder.decode(bytesAt(ptr, length));
    Atomics.store(control, 0, 0);
    post({ type: 'call', payload });
    Atomics.wait(control, 0, 0);
    const reply = receiveMessageOnPort(init.replies);
    pending = encoder.encode(reply ? String(reply.message) : '{"error":"no answer from the gateway"}');
    return pending.length;
  },
  take(ptr: number): void {
    bytesAt(ptr, pending.length).set(pending);
    pending = new Uint8Array(0);
  },
  print(ptr: number, length: number): void {
    post({ type: 'print', line: length ? decoder.decode(bytesAt(ptr, length)) : '' });
  },
};

const instance = new WebAssembly.Instance(init.module, { ...imports, skybridge });
const exports = instance.exports as unknown as SandboxExports;
guest.memory = exports.memory;
wasi.initialize(instance);

port.on('message', (request: string) => {
  try {
    const bytes = encoder.encode(request);
    const ptr = exports.input(bytes.length);
    bytesAt(ptr, bytes.length).set(bytes);
    const length = exports.run(bytes.length);
    const output = length ? decoder.decode(bytesAt(exports.output(), length)) : '';
    post({ type: 'done', output, memoryBytes: buffer().byteLength });
  } catch (err) {
    // A trap or a Go fatal error leaves the instance unusable: report it; the main thread replaces us.
    const fatal = /fatal error: [^\n]*/.exec(stderrHead)?.[0];
    post({ type: 'crashed', message: fatal ?? (err instanceof Error ? err.message : String(err)) });
  }
});
post({ type: 'ready' });
