// A first run as a newcomer makes it: the gateway on its embedded defaults (providers from the
// environment, no config.json) logs the first request so the dashboard shows it; one setting turns
// that off; the messages met on the way name the fix; the reference gateway's flags work. Real
// traffic through the official OpenAI SDK, the mock provider as the upstream.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { once } from 'node:events';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway as startInProcess } from '../helpers/in-process-gateway.ts';
import { startGateway as startChild, type RunningGateway } from '../helpers/gateway.ts';
import { eventually, patience } from '../helpers/patience.ts';
import { mockProvider } from '../helpers/providers.ts';
import { freePort } from '../helpers/ports.ts';

const MAIN = new URL('../../proxy/src/main.ts', import.meta.url).pathname;
const run = promisify(execFile);
/** Every token costs a cent: one chat spends the tiny budget. */
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];

let mock: MockProvider;
before(async () => {
  mock = await startMockProvider();
});
after(async () => mock.close());

const sdk = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0 });
const errorOf = async (p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> => {
  const e = await p.then(() => undefined, (err: unknown) => err);
  assert.ok(e instanceof OpenAI.APIError, `expected an API error, got ${String(e)}`);
  return e;
};

describe('embedded defaults', () => {
  test('with no config.json, the first request is in the logs (SQLite in the app dir) and the dashboard overview has it', async () => {
    const g = await startInProcess(undefined, { env: { OPENAI_API_KEY: 'sk-env-key', OPENAI_BASE_URL: `${mock.url}/openai` } });
    try {
      const answer = await sdk(g.url).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'first request' }] });
      assert.ok(answer.choices[0]!.message.content);
      await eventually(async () => {
        const res = await fetch(`${g.url}/api/logs`);
        assert.equal(res.status, 200);
        const body = (await res.json()) as { logs: { model: string; status_code: number }[] };
        assert.equal(body.logs[0]?.model, 'gpt-4o');
        assert.equal(body.logs[0]?.status_code, 200);
      }, 3000);
      assert.ok(existsSync(join(g.appDir, 'logs.db')), 'logs.db in the app dir');
      const info = (await (await fetch(`${g.url}/api/dashboard`)).json()) as { features: { logs: boolean }; auth_enabled: boolean };
      assert.equal(info.features.logs, true);
      assert.equal(info.auth_enabled, false, 'the dashboard shows its set-a-password hint then');
    } finally {
      await g.stop();
    }
  });

  test('without an app dir, the first request is logged to logs.db in the working directory (the data dir the README names)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'skybridge-no-app-dir-'));
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN, '--port', String(port), '--host', '127.0.0.1', '--shutdown-grace', '3'], {
      cwd,
      env: { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-env-key', OPENAI_BASE_URL: `${mock.url}/openai` },
      stdio: 'ignore',
    });
    const exited = once(child, 'exit');
    try {
      const url = `http://127.0.0.1:${port}`;
      await eventually(async () => assert.equal((await fetch(`${url}/health`)).status, 200), 60_000);
      await sdk(url).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'no app dir' }] });
      await eventually(async () => {
        const body = (await (await fetch(`${url}/api/logs`)).json()) as { logs: { model: string }[] };
        assert.equal(body.logs[0]?.model, 'gpt-4o');
      }, 3000);
      assert.ok(existsSync(join(cwd, 'logs.db')), 'logs.db in the working directory');
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  test('client.enable_logging false is the one setting that turns it off', async () => {
    const g = await startInProcess({ providers: { openai: mockProvider(mock.url, 'openai') }, client: { enable_logging: false } });
    try {
      await sdk(g.url).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'not logged' }] });
      const res = await fetch(`${g.url}/api/logs`);
      assert.equal(res.status, 404);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /client\.enable_logging is false/);
      assert.ok(!existsSync(join(g.appDir, 'logs.db')));
    } finally {
      await g.stop();
    }
  });
});

describe('messages that name the fix', () => {
  let url: string;
  let stop: () => Promise<void>;
  before(async () => {
    const g = await startInProcess({
      providers: { openai: mockProvider(mock.url, 'openai', { pricing_overrides: CENT_PER_TOKEN }), gemini: mockProvider(mock.url, 'gemini') },
      governance: {
        budgets: [{ id: 'tiny', max_limit: 0.01, reset_duration: '1d' }],
        virtual_keys: [{ id: 'spent', name: 'spent', value: 'sk-bf-spent-0123456789', budget_id: 'tiny', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] }],
      },
    });
    url = g.url;
    stop = g.stop;
  });
  after(async () => stop());

  test('a bare model of a provider that is not configured names its environment variable and config entry', async () => {
    const e = await errorOf(sdk(url).chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }));
    assert.equal(e.status, 400);
    assert.equal(e.code, 'provider_not_configured');
    assert.match(e.message, /provider 'anthropic'.*ANTHROPIC_API_KEY.*providers\.anthropic/);
    const prefixed = await errorOf(sdk(url).chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }));
    assert.match(prefixed.message, /ANTHROPIC_API_KEY/);
  });

  test('an unknown provider prefix says unknown provider', async () => {
    const e = await errorOf(sdk(url).chat.completions.create({ model: 'acme/turbo-1', messages: [{ role: 'user', content: 'hi' }] }));
    assert.equal(e.status, 400);
    assert.equal(e.code, 'unknown_provider');
    assert.match(e.message, /unknown provider 'acme'.*configured providers: openai, gemini/);
  });

  test('a spent budget says when it resets, as an ISO 8601 date', async () => {
    const vk = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0, defaultHeaders: { 'x-bf-vk': 'sk-bf-spent-0123456789' } });
    await vk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'spend it all' }] });
    await eventually(async () => {
      const e = await errorOf(vk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'once more' }] }));
      assert.equal(e.status, 402);
      const at = /resets at (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)/.exec(e.message)?.[1];
      assert.ok(at, e.message);
      assert.ok(Date.parse(at) > Date.now(), 'the reset is ahead');
    }, 3000);
  });

  test("an upstream 401 is the gateway's own key: 502 provider_auth_failed, not the client's 401", async () => {
    mock.inject({ format: 'openai', status: 401, message: 'Incorrect API key provided' });
    const e = await errorOf(sdk(url).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    assert.equal(e.status, 502);
    assert.equal(e.code, 'provider_auth_failed');
    assert.match(e.message, /provider 'openai' refused the gateway's key/);
  });
});

describe('the command line', () => {
  test('--version prints the version and exits 0', async () => {
    const { stdout } = await run(process.execPath, [MAIN, '--version'], { timeout: patience(90_000) });
    assert.match(stdout, /^skybridge \d+\.\d+\.\d+\n$/);
  });

  test("the reference's single-dash flags start it: -port, -host, -app-dir, -log-level", async () => {
    let g: RunningGateway | undefined;
    try {
      g = await startChild({ providers: {} }, { args: ['-port', '0', '-host', '127.0.0.1', '-log-level', 'info'] });
      assert.equal((await fetch(`${g.url}/health`)).status, 200);
    } finally {
      await g?.stop();
    }
  });

  test('a busy port is one line naming the port, no stack', async () => {
    const blocker = createServer();
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const port = (blocker.address() as { port: number }).port;
    try {
      // Without an app dir the data (logs.db) goes to the working directory: a temporary one.
      const cwd = mkdtempSync(join(tmpdir(), 'skybridge-busy-'));
      const out = await run(process.execPath, [MAIN, '-port', String(port), '-host', '127.0.0.1'], { cwd, timeout: patience(90_000), env: { PATH: process.env.PATH } }).then(
        (ok: { stdout: string; stderr: string }) => assert.fail(`started on a busy port, or exited 0:\n${ok.stdout}\n${ok.stderr}`),
        (err: { code: number; stderr: string }) => err,
      );
      assert.equal(out.code, 1);
      const lines = out.stderr.trim().split('\n').filter((l) => !l.startsWith('{'));
      assert.deepEqual(lines, [`port ${port} on 127.0.0.1 is already in use: stop what listens there, or choose another with --port N`]);
    } finally {
      blocker.close();
    }
  });
});
