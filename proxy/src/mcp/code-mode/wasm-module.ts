// Loads the committed Starlark sandbox (starlark.wasm, built by starlark-wasm/build.sh) and compiles it
// once per process, with a hard ceiling on its linear memory.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WASM_PAGE = 65536;

/** Where starlark.wasm lives: next to this module, or (compiled into dist/) in the source tree. */
export function wasmPath(): string {
  const candidates = [
    new URL('./starlark.wasm', import.meta.url),
    new URL('../../../../../proxy/src/mcp/code-mode/starlark.wasm', import.meta.url),
  ];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new Error(`code mode: starlark.wasm not found (looked in ${candidates.map((u) => fileURLToPath(u)).join(', ')})`);
}

function readLeb(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  let byte: number;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, at];
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return out;
}

/**
 * Rewrites the module's memory section so the memory cannot grow past maxBytes: Go's allocator then
 * fails with "out of memory" inside the sandbox instead of taking the gateway's memory. Go declares
 * its memory without a maximum, so this is the only place a hard bound can go.
 */
export function capMemory(wasm: Uint8Array, maxBytes: number): Uint8Array {
  const parts: Uint8Array[] = [wasm.subarray(0, 8)];
  let at = 8;
  let found = false;
  while (at < wasm.length) {
    const id = wasm[at];
    const [size, body] = readLeb(wasm, at + 1);
    const end = body + size;
    if (id === 5) {
      const [count, afterCount] = readLeb(wasm, body);
      if (count !== 1) throw new Error('code mode: starlark.wasm declares an unexpected number of memories');
      const [min] = readLeb(wasm, afterCount + 1); // after the limits flags byte
      const maxPages = Math.max(min, Math.floor(maxBytes / WASM_PAGE));
      const content = [...leb(1), 0x01, ...leb(min), ...leb(maxPages)];
      parts.push(Uint8Array.of(5, ...leb(content.length), ...content));
      found = true;
    } else {
      parts.push(wasm.subarray(at, end));
    }
    at = end;
  }
  if (!found) throw new Error('code mode: starlark.wasm has no memory section');
  return Buffer.concat(parts);
}

const compiled = new Map<number, Promise<WebAssembly.Module>>();

/** The sandbox module with its memory capped at maxBytes, compiled once per distinct cap. */
export function sandboxModule(maxBytes: number): Promise<WebAssembly.Module> {
  let module = compiled.get(maxBytes);
  if (!module) {
    const bytes = capMemory(readFileSync(wasmPath()), maxBytes);
    module = WebAssembly.compile(bytes);
    compiled.set(maxBytes, module);
    module.catch(() => compiled.delete(maxBytes));
  }
  return module;
}
