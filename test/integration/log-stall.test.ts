// The gateway's log never blocks its event loop: a gateway whose stdout pipe nobody reads (a log
// collector that stalled) keeps answering, its lines wait in memory, and once the pipe is read
// again every line arrives. Run as users run it: a child process, its stdout a pipe.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, patience } from '../helpers/patience.ts';

const MAIN = new URL('../../proxy/src/main.ts', import.meta.url).pathname;
let child: ChildProcess | undefined;

after(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
});

test('a stalled stdout reader does not stall requests, and no line is lost', async () => {
  const appDir = mkdtempSync(join(tmpdir(), 'skybridge-logpipe-'));
  // Debug: every /health request writes an access line (about 200 bytes); the pipe holds 64 KiB.
  child = spawn(process.execPath, [MAIN, '--app-dir', appDir, '--port', '0', '--host', '127.0.0.1', '--log-level', 'debug', '--no-dashboard'], {
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const out = child.stdout!;
  let text = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${text}`)), patience(60_000));
    const onData = (d: Buffer) => {
      text += d.toString();
      const m = /"address":"http:\/\/[^:]+:(\d+)"/.exec(text);
      if (!m) return;
      clearTimeout(timer);
      out.off('data', onData);
      // Nobody reads the pipe from here on: it fills, and the gateway's writes must not wait for it.
      out.pause();
      resolve(Number(m[1]));
    };
    out.on('data', onData);
    child!.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${text}`)));
  });

  const REQUESTS = 2000;
  const started = Date.now();
  for (let i = 0; i < REQUESTS; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => fetch(`http://127.0.0.1:${port}/health`, { headers: { 'x-request-id': `pipe-${i + j}` } }));
    for (const res of await Promise.all(batch)) {
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
  }
  // Far more than the pipe holds was logged while it was not read, and every request was answered.
  assert.ok(Date.now() - started < patience(60_000));

  // Read again: every access line arrives, in order, none dropped (well within the queue's bound).
  let rest = '';
  out.on('data', (d: Buffer) => (rest += d.toString()));
  out.resume();
  await eventually(() => {
    const ids = rest.split('\n').filter((l) => l.includes('"msg":"request"') && l.includes('"pipe-')).map((l) => (JSON.parse(l) as { request_id: string }).request_id);
    assert.equal(ids.length, REQUESTS, `access lines read back: ${ids.length}`);
    assert.ok(!rest.includes('log lines dropped'));
  }, 30_000);
});
