// Preloaded into a gateway under test (NODE_OPTIONS="--import <this file>"): records every module
// the process loads, by import or by require (a lazy() package included), and writes their URLs,
// one a line, to SKYBRIDGE_TEST_MODULES_FILE when the process exits. Tests read it to check what a
// configuration loads.
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const seen = new Set<string>();
registerHooks({
  load(url, context, nextLoad) {
    seen.add(url);
    return nextLoad(url, context);
  },
});
const file = process.env.SKYBRIDGE_TEST_MODULES_FILE;
// The main thread's modules: a worker thread (SQLite's) has its own preload and must not overwrite them.
if (file && isMainThread) process.on('exit', () => writeFileSync(file, [...seen].join('\n')));
