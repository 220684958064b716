// Skills repository tests' tools: a skill's files, and the independent readers a user's tools
// would be (git cloning the marketplace, Python's zipfile reading and writing archives), run as
// child processes without blocking the in-process gateway.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const skillMd = (name: string, description = `Does ${name} things. Use it when ${name} is asked for.`, body = `# ${name}\n\nSteps.\n`) =>
  `---\nname: ${name}\ndescription: ${description}\nlicense: Apache-2.0\nmetadata:\n  author: tests\n---\n${body}`;

/** JSON files of a skill: SKILL.md, a script, and a binary asset (base64). */
export function skillJson(name: string, extra: { path: string; content: string; encoding?: string }[] = []) {
  return [
    { path: 'SKILL.md', content: skillMd(name) },
    { path: 'scripts/run.sh', content: '#!/bin/sh\necho run\n' },
    { path: 'assets/logo.bin', content: Buffer.from([0, 1, 2, 255, 254]).toString('base64'), encoding: 'base64' },
    ...extra,
  ];
}

/** `git clone` of a URL into a new temporary directory; resolves with the directory. */
export async function gitClone(url: string): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'skills-clone-')), 'repo');
  // No credential prompt: a 401 must fail the clone, not wait for a terminal.
  await run('git', ['clone', '--quiet', url, dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/false' } });
  return dir;
}

/** Every file under a directory (relative paths, .git left out) with its bytes. */
export function treeOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (name === '.git' && d === dir) continue;
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

const PY_READ = `
import sys, zipfile, io, json, base64
z = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read()))
assert z.testzip() is None
print(json.dumps({i.filename: base64.b64encode(z.read(i)).decode() for i in z.infolist()}))
`;

/** An archive read by Python's zipfile (CRCs checked): its entries by name. */
export async function unzip(data: Buffer): Promise<Map<string, Buffer>> {
  const child = execFile('python3', ['-c', PY_READ], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  const out = new Promise<string>((resolve, reject) => {
    let text = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`python zipfile failed: ${err}`))));
  });
  child.stdin!.end(data);
  const entries = JSON.parse(await out) as Record<string, string>;
  return new Map(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

const PY_WRITE = `
import sys, zipfile, io, json, base64
files = json.loads(sys.stdin.read())
b = io.BytesIO()
with zipfile.ZipFile(b, 'w', zipfile.ZIP_DEFLATED) as z:
    for name, data in files.items():
        z.writestr(name, base64.b64decode(data))
sys.stdout.write(base64.b64encode(b.getvalue()).decode())
`;

/** A ZIP archive written by Python's zipfile (deflated), as a user's zip tool would make one. */
export async function zipWithPython(files: Record<string, string | Buffer>): Promise<Buffer> {
  const child = execFile('python3', ['-c', PY_WRITE], { maxBuffer: 64 * 1024 * 1024 });
  const out = new Promise<string>((resolve, reject) => {
    let text = '';
    let err = '';
    child.stdout!.on('data', (d: string) => (text += d));
    child.stderr!.on('data', (d: string) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`python zipfile failed: ${err}`))));
  });
  child.stdin!.end(JSON.stringify(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString('base64')]))));
  return Buffer.from(await out, 'base64');
}
