// `node scripts/readme-headers.ts`: writes README.md's table of x-bf-* headers from the code's
// registry (proxy/src/bf-headers.ts), between its `x-bf-headers` markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bfHeaderTable } from '../proxy/src/bf-headers.ts';
import { README_HEADERS_END, README_HEADERS_START, replaceHeaderTable } from '../test/helpers/readme-headers.ts';

const file = join(resolve(import.meta.dirname, '..'), 'README.md');
const text = readFileSync(file, 'utf8');
const next = replaceHeaderTable(text, bfHeaderTable());
if (next === text) console.log(`README.md: the x-bf-* table is up to date`);
else {
  writeFileSync(file, next);
  console.log(`README.md: the x-bf-* table between ${README_HEADERS_START} and ${README_HEADERS_END} rewritten`);
}
