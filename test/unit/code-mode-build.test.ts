// The committed sandbox (proxy/src/mcp/code-mode/starlark.wasm) is exactly what starlark-wasm/ builds,
// and its memory is capped when loaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { capMemory, wasmPath } from '../../proxy/src/mcp/code-mode/wasm-module.ts';

const hasGo = spawnSync('go', ['version']).status === 0;

test('rebuilding starlark-wasm/ gives the committed bytes', { skip: !hasGo && 'Go is not installed', timeout: 600_000 }, () => {
  const check = spawnSync('bash', ['starlark-wasm/build.sh', '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

test('the loaded module cannot grow its memory past the cap', () => {
  const capped = capMemory(readFileSync(wasmPath()), 32 * 1024 * 1024);
  const module = new WebAssembly.Module(capped);
  // Instantiate without running anything: every import is a function that is never called.
  const imports: Record<string, Record<string, () => number>> = {};
  for (const i of WebAssembly.Module.imports(module)) (imports[i.module] ??= {})[i.name] = () => 0;
  const memory = new WebAssembly.Instance(module, imports).exports.memory as WebAssembly.Memory;
  const pages = memory.buffer.byteLength / 65536;
  assert.equal(memory.grow(512 - pages), pages, 'growing up to 32 MiB works');
  assert.throws(() => memory.grow(1), RangeError);
});
