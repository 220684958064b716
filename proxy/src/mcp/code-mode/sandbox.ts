// Runs Starlark code in the WebAssembly sandbox on a small pool of warm worker threads. Tool calls
// arrive from a blocked worker, are answered by the caller's handler, and released with Atomics.notify.
// A run over its wall-clock time terminates its worker (a busy loop or a stuck tool call alike) and
// the pool starts a fresh one on demand.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { sandboxModule } from './wasm-module.ts';
import type { WorkerInit, WorkerMessage } from './worker.ts';
import { unsafeJson } from '../../schema/names.ts';

export interface SandboxLimits {
  /** Starlark execution steps (roughly bytecode instructions) per execution. */
  maxSteps: number;
  /** Tool calls per execution. */
  maxToolCalls: number;
  /** Bytes of result JSON, and separately of print() output, per execution. */
  maxOutputBytes: number;
  /** Ceiling of the sandbox's WebAssembly memory (per worker). */
  maxMemoryBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  maxSteps: 10_000_000,
  maxToolCalls: 100,
  maxOutputBytes: 256 * 1024,
  maxMemoryBytes: 256 * 1024 * 1024,
};

/** A code-mode server as the sandbox sees it: the global name and its tool attributes. */
export interface SandboxServer {
  global: string;
  server: string;
  tools: { attr: string; tool: string }[];
}

export interface SandboxHandlers {
  call(server: string, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  print(line: string): void;
}

export interface SandboxOutcome {
  /** The `result` global as JSON text (absent on error). */
  resultJson?: string;
  error?: string;
  steps: number;
  toolCalls: number;
}

const MAX_WORKERS = 4;
const MAX_IDLE = 2;
/** WebAssembly memory never shrinks: a worker whose run grew it past this is retired, not kept idle. */
const RECYCLE_BYTES = 64 * 1024 * 1024;
/** Largest tool answer handed to the sandbox (it is copied through the worker's small JS heap). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

class SandboxWorker {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  readonly control = new Int32Array(new SharedArrayBuffer(4));
  readonly replies: MessagePort;
  onMessage: ((message: WorkerMessage) => void) | undefined;
  onExit: ((reason: string) => void) | undefined;
  dead = false;
  readonly memoryCap: number;

  constructor(module: WebAssembly.Module, memoryCap: number) {
    this.memoryCap = memoryCap;
    const { port1, port2 } = new MessageChannel();
    this.replies = port1;
    // Only posted to: it must not keep the gateway process alive.
    this.replies.unref();
    const init: WorkerInit = { module, control: this.control.buffer as SharedArrayBuffer, replies: port2 };
    this.worker = new Worker(workerUrl, {
      workerData: init,
      transferList: [port2],
      // None of the gateway's own flags (--input-type, --import, ...) apply to the sandbox thread.
      execArgv: [],
      // The JS side of the worker is tiny; the sandbox's own memory is capped in the wasm module.
      resourceLimits: { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8, stackSizeMb: 4 },
    });
    this.ready = new Promise((resolve, reject) => {
      this.onMessage = (m) => (m.type === 'ready' ? resolve() : undefined);
      this.onExit = (reason) => reject(new Error(`code mode: the sandbox failed to start: ${reason}`));
    });
    this.worker.on('message', (m: WorkerMessage) => this.onMessage?.(m));
    this.worker.on('error', (err) => this.exit(err.message));
    this.worker.on('exit', (code) => this.exit(`worker exited with code ${code}`));
    // A run's timer keeps the process alive while it runs; an idle worker must not. Last: adding a
    // 'message' listener references the worker's port again.
    this.worker.unref();
  }

  private exit(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    this.replies.close();
    this.onExit?.(reason);
  }

  answer(reply: string): void {
    this.replies.postMessage(reply);
    Atomics.store(this.control, 0, 1);
    Atomics.notify(this.control, 0);
  }

  terminate(): void {
    this.dead = true;
    this.replies.close();
    void this.worker.terminate();
  }
}

const idle: SandboxWorker[] = [];
let live = 0;
const waiting: ((w: SandboxWorker) => void)[] = [];

async function acquire(maxMemoryBytes: number): Promise<SandboxWorker> {
  while (idle.length) {
    const w = idle.pop()!;
    if (!w.dead && w.memoryCap === maxMemoryBytes) return w;
    if (!w.dead) w.terminate();
    live--;
  }
  if (live >= MAX_WORKERS) return new Promise((resolve) => waiting.push(resolve));
  live++;
  try {
    const w = new SandboxWorker(await sandboxModule(maxMemoryBytes), maxMemoryBytes);
    await w.ready;
    return w;
  } catch (err) {
    live--;
    throw err;
  }
}

function release(w: SandboxWorker, reusable: boolean): void {
  w.onMessage = undefined;
  w.onExit = undefined;
  if (!reusable || w.dead) {
    if (!w.dead) w.terminate();
    live--;
    // Replace it: a caller waiting for a slot gets the fresh worker, else it waits warm in the pool.
    const next = waiting.shift();
    acquire(w.memoryCap).then(next ?? ((fresh) => release(fresh, true)), () => undefined);
    return;
  }
  const next = waiting.shift();
  if (next) return next(w);
  if (idle.length < MAX_IDLE) idle.push(w);
  else {
    w.terminate();
    live--;
  }
}

/** Starts a worker ahead of the first execution so it pays the cold start (~0.5 s), not a request. */
export async function prewarm(limits: SandboxLimits = DEFAULT_LIMITS): Promise<void> {
  const w = await acquire(limits.maxMemoryBytes);
  release(w, true);
}

function describeValueError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs code once; resolves (never rejects for problems of the code itself) with the outcome. */
export async function runStarlark(
  code: string,
  servers: SandboxServer[],
  handlers: SandboxHandlers,
  timeoutMs: number,
  limits: SandboxLimits = DEFAULT_LIMITS,
): Promise<SandboxOutcome> {
  // The timer also covers the wait for a worker, and keeps the process alive meanwhile.
  let timedOut!: () => void;
  const deadline = new Promise<void>((resolve) => (timedOut = resolve));
  const timeoutError = `execution timed out after ${timeoutMs} ms (tool_execution_timeout)`;
  const timer = setTimeout(() => timedOut(), timeoutMs);
  const acquiring = acquire(limits.maxMemoryBytes);
  const w = await Promise.race([acquiring, deadline]);
  if (!w) {
    acquiring.then((late) => release(late, true), () => undefined);
    return { error: timeoutError, steps: 0, toolCalls: 0 };
  }
  const abort = new AbortController();
  return new Promise<SandboxOutcome>((resolve) => {
    let settled = false;
    let toolCalls = 0;
    const finish = (outcome: SandboxOutcome, reusable: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      abort.abort();
      release(w, reusable);
      resolve(outcome);
    };
    deadline.then(() => {
      w.terminate();
      finish({ error: timeoutError, steps: 0, toolCalls }, false);
    });
    w.onExit = (reason) => finish({ error: `the sandbox stopped: ${reason}`, steps: 0, toolCalls }, false);
    w.onMessage = (m) => {
      switch (m.type) {
        case 'print':
          handlers.print(m.line);
          return;
        case 'call': {
          toolCalls++;
          const { server, tool, args } = JSON.parse(m.payload) as { server: string; tool: string; args: Record<string, unknown> };
          // The rule tool calls follow everywhere (http/body.ts): no `__proto__` member.
          const unsafe = unsafeJson(args, 'args');
          if (unsafe) {
            w.answer(JSON.stringify({ error: `${server}.${tool}: ${unsafe.path}: ${unsafe.message}` }));
            return;
          }
          handlers.call(server, tool, args, abort.signal).then(
            (value) => {
              if (settled) return;
              let reply: string;
              try {
                reply = JSON.stringify({ ok: value ?? null });
              } catch (err) {
                reply = JSON.stringify({ error: `the tool's answer is not JSON: ${describeValueError(err)}` });
              }
              const size = Buffer.byteLength(reply);
              if (size > MAX_ANSWER_BYTES) {
                reply = JSON.stringify({ error: `the tool's answer is ${size} bytes, over the ${MAX_ANSWER_BYTES}-byte limit for code mode` });
              }
              w.answer(reply);
            },
            (err: unknown) => {
              if (!settled) w.answer(JSON.stringify({ error: describeValueError(err) }));
            },
          );
          return;
        }
        case 'done': {
          const out = JSON.parse(m.output) as { result?: string; error?: string; steps: number; toolCalls: number };
          const outcome: SandboxOutcome = { steps: out.steps, toolCalls: out.toolCalls };
          if (out.error !== undefined) outcome.error = out.error;
          else outcome.resultJson = out.result ?? 'null';
          finish(outcome, m.memoryBytes <= RECYCLE_BYTES);
          return;
        }
        case 'crashed':
          finish({ error: `the sandbox stopped: ${m.message}`, steps: 0, toolCalls }, false);
          return;
      }
    };
    w.worker.postMessage(JSON.stringify({ code, servers, ...limitsForGuest(limits) }));
  });
}

function limitsForGuest(limits: SandboxLimits): Record<string, number> {
  return { maxSteps: limits.maxSteps, maxToolCalls: limits.maxToolCalls, maxOutputBytes: limits.maxOutputBytes };
}
