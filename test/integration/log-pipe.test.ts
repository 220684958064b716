// A gateway whose log pipes were closed by their reader (a log shipper that died, a terminal that went
// away) keeps serving and stays idle: every later log line would fail with EPIPE, and that failure
// must not turn into a loop of logging the failure to the same closed pipe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../../proxy/src/main.ts', import.meta.url).pathname;

const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

test('closed log pipes: the gateway answers and does not spin', async () => {
  const appDir = mkdtempSync(join(tmpdir(), 'skybridge-logpipe-'));
  const child = spawn(process.execPath, [MAIN, '--app-dir', appDir, '--port', '0', '--host', '127.0.0.1', '--log-level', 'debug'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"address":"http:\/\/[^:]+:(\d+)"/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    child.stdout.destroy();
    child.stderr.destroy();
    const url = `http://127.0.0.1:${port}`;
    // Requests that log (debug lines, a 400 warning) now write to closed pipes.
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"openai/x","messages":[]}' });
      await res.arrayBuffer();
    }
    const before = cpuSeconds(child.pid!);
    await new Promise((r) => setTimeout(r, 2000));
    const spent = cpuSeconds(child.pid!) - before;
    assert.ok(spent < 0.5, `the gateway burned ${spent} s of CPU in 2 s while idle`);
    assert.equal((await fetch(`${url}/health`)).status, 200);
  } finally {
    child.kill('SIGKILL');
  }
});
