// What the start-up says about where the configuration lives: a mistyped --app-dir stops it, no
// --app-dir says /api writes are lost on restart, the Kubernetes-only settings variables are not
// silently ignored, and a config.json routing rule that cannot compile is skipped visibly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const MAIN = new URL('../../proxy/src/main.ts', import.meta.url).pathname;

let mock: MockProvider;
const running: ChildProcess[] = [];
const gateways: RunningGateway[] = [];

before(async () => {
  mock = await startMockProvider();
});
after(async () => {
  for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const g of gateways) await g.stop();
  await mock?.close();
});

/** Runs the gateway with exactly `args`; resolves once it listens (with its URL) or exits. */
async function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ url?: string; code?: number | null; output: () => string }> {
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--host', '127.0.0.1', ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    // Generous: a loaded machine can take many seconds to start a child Node.
    const timer = setTimeout(() => reject(new Error(`gateway neither listened nor exited:\n${output}`)), 60_000);
    child.stdout!.on('data', () => {
      const m = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], output: () => output });
      }
    });
    void once(child, 'exit').then(([code]) => {
      clearTimeout(timer);
      resolve({ code: code as number | null, output: () => output });
    });
  });
}

test('a mistyped --app-dir is a start-up error naming the path', async () => {
  const missing = join(tmpdir(), `skybridge-no-such-dir-${process.pid}`);
  const r = await run(['--app-dir', missing], { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: `${mock.url}/openai` });
  assert.equal(r.code, 1, r.output());
  assert.ok(r.output().includes(`--app-dir ${missing}: no such directory`), r.output());
});

test('without --app-dir the log and the dashboard say /api writes live in memory; the admin variables are said to be ignored', async () => {
  const r = await run([], { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: `${mock.url}/openai`, SKYBRIDGE_ADMIN_USERNAME: 'admin', SKYBRIDGE_ADMIN_PASSWORD: 'secret-password' });
  assert.ok(r.url, r.output());
  assert.match(r.output(), /live in memory only and are lost on restart/);
  assert.match(r.output(), /SKYBRIDGE_ADMIN_USERNAME, SKYBRIDGE_ADMIN_PASSWORD are set but read only with --kube-namespace[^\n]*\/api is NOT protected/);
  const info = (await (await fetch(`${r.url}/api/dashboard`)).json()) as { config_notices: string[] };
  assert.ok(info.config_notices.some((n) => /lost when the gateway restarts/.test(n)), JSON.stringify(info));
  const status = (await (await fetch(`${r.url}/api/config/status`)).json()) as { store: { kind: string; persistent: boolean } };
  assert.deepEqual(status.store, { kind: 'memory', persistent: false });
});

test('a config.json routing rule that cannot compile is skipped, and listed with its error, counted and shown', async () => {
  const g = await startGateway({
    providers: mockProviders(mock.url),
    governance: { routing_rules: [{ id: 'rule-broken', name: 'broken', cel_expression: 'model ==', targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }] }] },
  });
  gateways.push(g);
  const api = apiClient(g);
  const rules = await api<{ rules: { id: string; error?: string }[] }>('GET', '/api/routing/rules');
  const broken = rules.body.rules.find((x) => x.id === 'rule-broken');
  assert.match(broken?.error ?? '', /Failed to compile rule: invalid CEL syntax/, rules.text);
  assert.match((await api<{ rule: { error?: string } }>('GET', '/api/routing/rules/rule-broken')).body.rule.error ?? '', /invalid CEL syntax/);
  assert.match((await api('GET', '/metrics')).text, /^skybridge_routing_rules_skipped 1$/m);
  const info = await api<{ config_notices: string[] }>('GET', '/api/dashboard');
  assert.ok(info.body.config_notices.some((n) => n.includes("routing rule 'broken' is skipped")), info.text);
  // With --app-dir the store is a file, said so.
  const status = await api<{ store: { kind: string; persistent: boolean; location: string } }>('GET', '/api/config/status');
  assert.equal(status.body.store.location, join(g.appDir, 'config.store.json'));
});
