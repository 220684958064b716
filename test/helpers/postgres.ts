// A real PostgreSQL server for tests: a throw-away cluster (initdb, trust auth on loopback) in a
// temporary directory, its own postmaster on a free loopback port, removed when stopped. PostgreSQL
// refuses to run as root, so under root the cluster belongs to the unprivileged `nobody` user.
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';
import { patience } from './patience.ts';

export interface RunningPostgres {
  host: string;
  port: number;
  user: string;
  /** The database created for the test (empty). */
  database: string;
  /** postgres://user@127.0.0.1:port/database */
  url: string;
  /** Creates another empty database; resolves with its name. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown, SIGKILL after 5 s) and removes the cluster. */
  stop(): Promise<void>;
  /**
   * The postmaster and every process it forked (one backend per connection): SIGSTOP them all to
   * simulate a server that hangs; the postmaster alone would leave open connections answering.
   */
  pids(): number[];
}

/** `root` and its descendants, from /proc (Linux). */
function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parent) if (ppid === out[i]) out.push(pid);
  return out;
}

const SUPERUSER = 'postgres';

/** The directory holding initdb and postgres: PG_BIN, else the newest Debian/Ubuntu install. */
export function postgresBinDir(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  for (const dir of ['/usr/local/bin', '/opt/homebrew/bin', '/usr/bin']) if (existsSync(join(dir, 'initdb'))) return dir;
  return undefined;
}

/** uid/gid to run as: ourselves unless we are root, then `nobody`. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'));
  if (!line) throw new Error('running as root and there is no `nobody` user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}


function run(cmd: string, args: string[], as: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...as, env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}:\n${out}`))));
  });
}

async function waitReady(port: number, exited: () => boolean, output: () => string): Promise<void> {
  const limit = patience(20_000);
  const deadline = Date.now() + limit;
  for (;;) {
    if (exited()) throw new Error(`postgres exited before accepting connections:\n${output()}`);
    const client = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, database: 'postgres', connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) throw new Error(`postgres did not accept connections within ${limit / 1000} s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `bin`: the directory holding initdb and postgres (default: postgresBinDir()). */
export async function startPostgres(bin = postgresBinDir()): Promise<RunningPostgres> {
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql, or set PG_BIN to the directory holding initdb)');
  const as = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-pg-'));
  if (as) chownSync(dir, as.uid, as.gid);
  const data = join(dir, 'data');
  await run(join(bin, 'initdb'), ['-D', data, '--auth=trust', '-U', SUPERUSER, '--no-sync', '-E', 'UTF8', '--locale=C'], as);
  const port = await freePort();
  // Durability is irrelevant for a test cluster; the socket lives in the cluster directory.
  const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
  const child: ChildProcess = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'pipe', 'pipe'], ...as });
  let out = '';
  let dead = false;
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      dead = true;
      resolve();
    });
    child.once('error', (err) => {
      out += `\n${err.message}`;
      dead = true;
      resolve();
    });
  });
  const stop = async (): Promise<void> => {
    if (!dead) {
      child.kill('SIGINT'); // fast shutdown
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(port, () => dead, () => out);
    const admin = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, database: 'postgres' });
    await admin.connect();
    await admin.query('CREATE DATABASE skybridge_test');
    await admin.end();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    host: '127.0.0.1',
    port,
    user: SUPERUSER,
    database: 'skybridge_test',
    url: `postgres://${SUPERUSER}@127.0.0.1:${port}/skybridge_test`,
    createDatabase: async (name: string) => {
      const admin = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, database: 'postgres' });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await admin.end();
      }
      return name;
    },
    stop,
    pids: () => (child.pid === undefined || dead ? [] : processTree(child.pid)),
  };
}
