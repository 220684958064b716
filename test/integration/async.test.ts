// Async jobs (/v1/async/*) through a real gateway process on SQLite: every operation submitted and
// polled over plain HTTP (the JSON ones also through the OpenAI SDK's raw requests), streaming
// refused, the submitter's virtual key alone (or a management credential) reading a job, expiry
// with its own answer, governance at submit, the webhook header refused for an unknown endpoint,
// the hand-off recorded on the job row, and a job accepted before a restart finished after it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { png, speechAudio } from '../mock-provider/media-files.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
let gateway: RunningGateway;

const VK_A = 'sk-bf-alpha-0123456789';
const VK_B = 'sk-bf-bravo-0123456789';
const VK_LIMITED = 'sk-bf-limited-0123456789';
const ADMIN_KEY = 'mgmt-key-0123456789abcdef';

const grants = [
  {
    provider: 'openai',
    allowed_models: ['gpt-4o', 'gpt-4o-mini', 'gpt-3.5-turbo-instruct', 'text-embedding-3-small', 'dall-e-2', 'dall-e-3', 'tts-1', 'whisper-1'],
    key_ids: ['*'],
    weight: 1,
  },
  { provider: 'cohere', allowed_models: ['rerank-v3.5'], key_ids: ['*'], weight: null },
];
const vk = (id: string, value: string, more: Record<string, unknown> = {}) => ({ id, name: id, value, provider_configs: grants, ...more });

function config(mockUrl: string): Record<string, unknown> {
  return {
    providers: {
      ...mockProviders(mockUrl),
      cohere: { keys: [{ name: 'cohere-key', value: 'sk-cohere-test', weight: 1 }], network_config: { base_url: `${mockUrl}/cohere`, max_retries: 0 } },
    },
    logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
    client: { enforce_auth_on_inference: true, async_job_config: { lease_seconds: 2, poll_interval_ms: 100, sweep_interval_seconds: 1 } },
    governance: {
      rate_limits: [{ id: 'two', request_max_limit: 2, request_reset_duration: '1h' }],
      virtual_keys: [vk('alpha', VK_A), vk('bravo', VK_B), vk('limited', VK_LIMITED, { rate_limit_id: 'two' })],
      auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'admin-password-123', api_keys: [ADMIN_KEY] },
    },
    webhooks: [
      { name: 'receiver', url: 'http://127.0.0.1:9/hook', events: ['async_job.completed', 'async_job.failed'], allow_private_network: true },
      { name: 'paused', url: 'http://127.0.0.1:9/hook', events: ['async_job.completed'], allow_private_network: true, disabled: true },
    ],
  };
}

before(async () => {
  mock = await startMockProvider();
  gateway = await startGateway(config(mock.url));
});
after(async () => {
  await gateway.stop();
  await mock.close();
});

interface JobView {
  id: string;
  status: string;
  created_at: string;
  expires_at: string;
  completed_at?: string;
  status_code?: number;
  result?: Record<string, unknown>;
  error?: { error: { message: string; type: string; param?: string } };
}

async function submitJson(path: string, body: unknown, headers: Record<string, string> = {}, g = gateway): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${g.url}/v1/async/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': VK_A, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function submitForm(path: string, form: FormData, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gateway.url}/v1/async/${path}`, { method: 'POST', headers: { 'x-bf-vk': VK_A, ...headers }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function poll(path: string, id: string, headers: Record<string, string> = { 'x-bf-vk': VK_A }, g = gateway): Promise<{ status: number; body: JobView }> {
  const res = await fetch(`${g.url}/v1/async/${path}/${id}`, { headers });
  return { status: res.status, body: (await res.json()) as JobView };
}

/** Polls until the job is finished; resolves with its final view. */
async function finished(path: string, id: string, timeoutMs = 10_000, g = gateway): Promise<JobView> {
  let last: { status: number; body: JobView } | undefined;
  await eventually(async () => {
    last = await poll(path, id, { 'x-bf-vk': VK_A }, g);
    assert.equal(last.status, 200, JSON.stringify(last.body));
  }, timeoutMs);
  return last!.body;
}

function acceptedJob(r: { status: number; body: Record<string, unknown> }): string {
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.status, 'pending');
  assert.match(String(r.body.id), /^[0-9a-f-]{36}$/);
  const created = Date.parse(String(r.body.created_at));
  const expires = Date.parse(String(r.body.expires_at));
  assert.ok(Math.abs(created - Date.now()) < 10_000);
  assert.ok(expires > created);
  return String(r.body.id);
}

const jobRow = (id: string): Record<string, unknown> => jobRowIn(gateway.appDir, id);

describe('every async operation: submit answers 202 at once, poll gives the result', () => {
  test('chat/completions through the OpenAI SDK raw requests: 202 while running, 200 with the completion', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: VK_A, maxRetries: 0 });
    mock.inject({ format: 'openai', model: 'gpt-4o-mini', latencyMs: 600 });
    const job = await client.post<Record<string, unknown>>('/async/chat/completions', { body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello async' }] } });
    assert.equal(job.status, 'pending');
    const running = await client.get<JobView>(`/async/chat/completions/${String(job.id)}`).withResponse();
    assert.equal(running.response.status, 202);
    assert.ok(['pending', 'processing'].includes(running.data.status), running.data.status);
    assert.equal(running.data.result, undefined);
    const done = await finished('chat/completions', String(job.id));
    assert.equal(done.status, 'completed');
    assert.equal(done.status_code, 200);
    const choices = done.result!.choices as { message: { content: string } }[];
    assert.equal(choices[0].message.content, 'Mock reply to: hello async');
    assert.ok(Date.parse(done.completed_at!) >= Date.parse(done.created_at));
    // The TTL counts from completion: the default hour.
    assert.ok(Math.abs(Date.parse(done.expires_at) - Date.parse(done.completed_at!) - 3600_000) < 1000);
  });

  const jsonCases: [string, unknown, (r: Record<string, unknown>) => void][] = [
    ['completions', { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'complete me' }, (r) => assert.match(String((r.choices as { text: string }[])[0].text), /complete me/)],
    ['responses', { model: 'openai/gpt-4o', input: 'respond later' }, (r) => assert.equal(r.object, 'response')],
    ['embeddings', { model: 'openai/text-embedding-3-small', input: 'embed me' }, (r) => assert.equal((r.data as { embedding: number[] }[])[0].embedding.length, 8)],
    ['images/generations', { model: 'openai/dall-e-3', prompt: 'a lighthouse', response_format: 'b64_json' }, (r) => assert.ok((r.data as { b64_json: string }[])[0].b64_json.length > 100)],
    ['rerank', { model: 'cohere/rerank-v3.5', query: 'capital of France', documents: ['Berlin is in Germany', 'Paris is the capital of France'] }, (r) => assert.equal((r.results as { index: number }[])[0].index, 1)],
    [
      'audio/speech',
      { model: 'openai/tts-1', input: 'Spoken later', voice: 'alloy', response_format: 'wav' },
      (r) => {
        assert.equal(r.content_type, 'audio/wav');
        assert.equal(Buffer.from(String(r.data), 'base64').toString('latin1', 0, 4), 'RIFF');
      },
    ],
  ];
  for (const [path, body, check] of jsonCases) {
    test(`${path}: JSON body`, async () => {
      const id = acceptedJob(await submitJson(path, body));
      const done = await finished(path, id);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.equal(done.status_code, 200);
      check(done.result!);
    });
  }

  test('audio/transcriptions: a multipart upload is stored and transcribed by the worker', async () => {
    const form = new FormData();
    form.set('model', 'openai/whisper-1');
    form.set('file', new Blob([speechAudio('mp3', 'Transcribed after the fact')], { type: 'audio/mpeg' }), 'speech.mp3');
    const id = acceptedJob(await submitForm('audio/transcriptions', form));
    const done = await finished('audio/transcriptions', id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.result!.text, 'Transcribed after the fact');
  });

  test('images/edits and images/variations: multipart with image files', async () => {
    const edit = new FormData();
    edit.set('model', 'openai/dall-e-2');
    edit.set('prompt', 'add a hat');
    edit.set('response_format', 'b64_json');
    edit.set('image', new Blob([png(64, 64, 'cat')], { type: 'image/png' }), 'cat.png');
    const editId = acceptedJob(await submitForm('images/edits', edit));
    const variation = new FormData();
    variation.set('model', 'openai/dall-e-2');
    variation.set('n', '2');
    variation.set('size', '256x256');
    variation.set('response_format', 'b64_json');
    variation.set('image', new Blob([png(256, 256, 'v')], { type: 'image/png' }), 'v.png');
    const variationId = acceptedJob(await submitForm('images/variations', variation));
    const e = await finished('images/edits', editId);
    assert.equal(e.status, 'completed', JSON.stringify(e.error));
    assert.equal((e.result!.data as unknown[]).length, 1);
    const uploaded = mock.requests.find((r) => r.path.endsWith('/images/edits'));
    assert.ok(uploaded, 'the provider got the edit');
    const v = await finished('images/variations', variationId);
    assert.equal(v.status, 'completed', JSON.stringify(v.error));
    assert.equal((v.result!.data as unknown[]).length, 2);
  });

  test('a provider error finishes the job as failed with its status and error body', async () => {
    mock.inject({ format: 'openai', model: 'gpt-4o', status: 400, message: 'the mock refuses this one' });
    const id = acceptedJob(await submitJson('chat/completions', { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'fail please' }] }));
    const done = await finished('chat/completions', id);
    assert.equal(done.status, 'failed');
    assert.equal(done.status_code, 400);
    assert.match(done.error!.error.message, /the mock refuses this one/);
    assert.equal(done.result, undefined);
  });
});

describe('submit checks', () => {
  test('stream: true is refused with a 400 naming the field, and no job is stored', async () => {
    const r = await submitJson('chat/completions', { model: 'openai/gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(r.status, 400);
    const err = r.body.error as { message: string; param: string };
    assert.equal(err.param, 'stream');
    assert.match(err.message, /async jobs do not support/);
    const sse = await submitJson('audio/speech', { model: 'openai/tts-1', input: 'x', voice: 'alloy', stream_format: 'sse' });
    assert.equal(sse.status, 400);
    assert.equal((sse.body.error as { param: string }).param, 'stream_format');
    const form = new FormData();
    form.set('model', 'openai/whisper-1');
    form.set('stream', 'true');
    form.set('file', new Blob([speechAudio('mp3', 'x')], { type: 'audio/mpeg' }), 'a.mp3');
    const streamedForm = await submitForm('audio/transcriptions', form);
    assert.equal(streamedForm.status, 400);
    assert.equal((streamedForm.body.error as { param: string }).param, 'stream');
  });

  test('a request its sync twin would refuse is refused the same way at submit (400 naming the field)', async () => {
    const r = await submitJson('chat/completions', { model: 'openai/gpt-4o', messages: 'not a list' });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.match(JSON.stringify(r.body.error), /messages/);
    assert.equal((r.body.error as { param: string }).param, 'messages');
    // What only the provider checks (the voice) fails the job, with the provider's status and field.
    const id = acceptedJob(await submitJson('audio/speech', { model: 'openai/tts-1', input: 'x', voice: 'robot' }));
    const done = await finished('audio/speech', id);
    assert.equal(done.status, 'failed');
    assert.equal(done.status_code, 400);
    assert.equal(done.error!.error.param, 'voice');
  });

  test('governance runs at submit: no key 401, a model outside the key 403, the rate limit 429 (a job counts once)', async () => {
    const anon = await fetch(`${gateway.url}/v1/async/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/text-embedding-3-small', input: 'x' }) });
    assert.equal(anon.status, 401);
    const denied = await submitJson('embeddings', { model: 'gemini/text-embedding-004', input: 'x' });
    assert.equal(denied.status, 403);
    // Two requests per hour: two jobs run (their runs are not counted again), the third submit is refused.
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push(acceptedJob(await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: `n${i}` }, { 'x-bf-vk': VK_LIMITED })));
    for (const id of ids) {
      const res = await fetch(`${gateway.url}/v1/async/embeddings/${id}`, { headers: { 'x-bf-vk': VK_LIMITED } });
      await eventually(async () => {
        const r = await fetch(`${gateway.url}/v1/async/embeddings/${id}`, { headers: { 'x-bf-vk': VK_LIMITED } });
        const body = (await r.json()) as JobView;
        assert.equal(body.status, 'completed', JSON.stringify(body));
      }, 10_000);
      await res.body?.cancel();
    }
    const third = await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'n3' }, { 'x-bf-vk': VK_LIMITED });
    assert.equal(third.status, 429);
  });

  test('the result TTL header: a bad value is a 400 naming the header; a good one sets expires_at', async () => {
    const bad = await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'x' }, { 'x-bf-async-job-result-ttl': 'soon' });
    assert.equal(bad.status, 400);
    assert.equal((bad.body.error as { param: string }).param, 'x-bf-async-job-result-ttl');
    const ok = await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'x' }, { 'x-bf-async-job-result-ttl': '120' });
    const id = acceptedJob(ok);
    assert.ok(Math.abs(Date.parse(String(ok.body.expires_at)) - Date.parse(String(ok.body.created_at)) - 120_000) < 1000);
    const done = await finished('embeddings', id);
    assert.ok(Math.abs(Date.parse(done.expires_at) - Date.parse(done.completed_at!) - 120_000) < 1000);
  });
});

describe('who may read a job', () => {
  test('another virtual key gets 404, the submitter and a management credential get the job', async () => {
    const id = acceptedJob(await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'private' }));
    await finished('embeddings', id);
    const other = await poll('embeddings', id, { 'x-bf-vk': VK_B });
    assert.equal(other.status, 404);
    const anon = await fetch(`${gateway.url}/v1/async/embeddings/${id}`);
    assert.equal(anon.status, 401);
    const basic = await poll('embeddings', id, { authorization: `Basic ${Buffer.from('admin:admin-password-123').toString('base64')}` });
    assert.equal(basic.status, 200);
    assert.equal(basic.body.id, id);
    const apiKey = await poll('embeddings', id, { authorization: `Bearer ${ADMIN_KEY}` });
    assert.equal(apiKey.status, 200);
    const wrongAdmin = await poll('embeddings', id, { authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` });
    assert.equal(wrongAdmin.status, 401);
    // Under another operation's path the job does not exist.
    assert.equal((await poll('chat/completions', id)).status, 404);
    assert.equal((await poll('embeddings', '00000000-0000-0000-0000-000000000000')).status, 404);
  });
});

describe('expiry', () => {
  test('after its TTL the result is gone and a fetch answers 410 saying it expired', async () => {
    const id = acceptedJob(await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'short-lived' }, { 'x-bf-async-job-result-ttl': '1' }));
    const done = await finished('embeddings', id);
    assert.equal(done.status, 'completed');
    await eventually(async () => {
      const r = await poll('embeddings', id);
      assert.equal(r.status, 410);
      assert.match((r.body as unknown as { error: { message: string } }).error.message, /expired/);
    }, 5000);
    // The sweeper removes the result from the store and keeps a tombstone saying it expired.
    await eventually(() => {
      const row = jobRow(id);
      assert.equal(row.expired, 1);
      assert.equal(row.result, null);
    }, 5000);
  });
});

describe('webhook header', () => {
  test('an unknown or disabled endpoint refuses the submit (400 naming it) and stores no job', async () => {
    const count = () => {
      const db = new DatabaseSync(join(gateway.appDir, 'logs.db'), { readOnly: true });
      try {
        return Number((db.prepare('SELECT COUNT(*) AS n FROM async_jobs').get() as { n: number }).n);
      } finally {
        db.close();
      }
    };
    const before = count();
    for (const name of ['nope', 'paused']) {
      const r = await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'x' }, { 'x-bf-async-webhook': name });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      const err = r.body.error as { message: string; param: string };
      assert.equal(err.param, 'x-bf-async-webhook');
      assert.match(err.message, new RegExp(`'${name}'`));
    }
    assert.equal(count(), before);
    // Without a valid key the caller learns nothing about endpoints: 401 first.
    const anon = await fetch(`${gateway.url}/v1/async/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-async-webhook': 'nope' }, body: JSON.stringify({ model: 'openai/text-embedding-3-small', input: 'x' }) });
    assert.equal(anon.status, 401);
  });

  test('with a live endpoint the job records the hand-off of its event; without the header nothing is handed over', async () => {
    const withHook = acceptedJob(await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'hooked' }, { 'x-bf-async-webhook': 'receiver' }));
    const without = acceptedJob(await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'plain' }));
    await finished('embeddings', withHook);
    await finished('embeddings', without);
    await eventually(() => {
      const row = jobRow(withHook);
      assert.equal(row.webhook, 'receiver');
      assert.equal(row.webhook_state, 'queued');
    });
    const plain = jobRow(without);
    assert.equal(plain.webhook, null);
    assert.equal(plain.webhook_state, null);
    // The stored request carries no credential: the key is kept by id only.
    assert.doesNotMatch(JSON.stringify(jobRow(withHook)), /sk-bf-/);
  });
});

describe('metrics', () => {
  test('/metrics shows jobs by state and the queue depth', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    assert.match(text, /skybridge_async_jobs\{state="completed"\} [1-9]/);
    assert.match(text, /skybridge_async_queue_depth \d+/);
    assert.match(text, /skybridge_async_jobs_finished_total\{status="completed"\} [1-9]/);
  });
});

test('without a logs store /v1/async answers 503 naming what is missing', async () => {
  // Request logs (and with them the embedded store) are on by default: turned off, there is none.
  const g = await startGateway({ providers: mockProviders(mock.url), client: { enable_logging: false } });
  try {
    const r = await fetch(`${g.url}/v1/async/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] }) });
    assert.equal(r.status, 503);
    assert.match(((await r.json()) as { error: { message: string } }).error.message, /logs store/);
  } finally {
    await g.stop();
  }
});

test('restart: a job accepted before the gateway was killed is run by the restarted gateway (SQLite)', async () => {
  const m = await startMockProvider();
  const cfg = { ...config(m.url), webhooks: [] };
  const first = await startGateway(cfg);
  let second: RunningGateway | undefined;
  try {
    // Slow enough that the first gateway is killed mid-job.
    m.inject({ format: 'openai', model: 'gpt-4o', latencyMs: 30_000 });
    const id = acceptedJob(await submitJson('chat/completions', { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'survive a restart' }] }, {}, first));
    const calls = () => m.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
    await eventually(() => assert.equal(calls(), 1), 5000);
    first.process.kill('SIGKILL');
    await new Promise((r) => first.process.once('exit', r));
    second = await startGateway(undefined, { appDir: first.appDir });
    const done = await finished('chat/completions', id, 15_000, second);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal((done.result!.choices as { message: { content: string } }[])[0].message.content, 'Mock reply to: survive a restart');
    // The provider saw the call twice: once from the killed run, once from the run after the lease lapsed.
    assert.equal(calls(), 2);
  } finally {
    await second?.stop();
    if (first.process.exitCode === null && first.process.signalCode === null) await first.stop();
    await m.close();
  }
});

test('graceful stop: a running job is given back at once, so the next gateway runs it without waiting for the lease', async () => {
  const m = await startMockProvider();
  const base = config(m.url);
  // A lease far longer than the test: only the give-back can explain a quick second run.
  const cfg = { ...base, webhooks: [], client: { ...(base.client as object), async_job_config: { lease_seconds: 120, poll_interval_ms: 100 } } };
  const first = await startGateway(cfg);
  let second: RunningGateway | undefined;
  try {
    m.inject({ format: 'openai', model: 'gpt-4o', latencyMs: 30_000 });
    const id = acceptedJob(await submitJson('chat/completions', { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'handed back' }] }, {}, first));
    await eventually(() => assert.equal(m.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 1), 5000);
    await first.stop();
    second = await startGateway(undefined, { appDir: first.appDir });
    const done = await finished('chat/completions', id, 10_000, second);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(Number(jobRowIn(first.appDir, id).attempts), 1, 'the cut-off run is not counted');
  } finally {
    await second?.stop();
    await first.stop();
    await m.close();
  }
});

function jobRowIn(appDir: string, id: string): Record<string, unknown> {
  const db = new DatabaseSync(join(appDir, 'logs.db'), { readOnly: true });
  try {
    return db.prepare('SELECT * FROM async_jobs WHERE id = ?').get(id) as Record<string, unknown>;
  } finally {
    db.close();
  }
}

test('an answer larger than max_result_size_mb fails the job with 507 result_too_large; a smaller one completes', async () => {
  const base = config(mock.url);
  const client = base.client as { async_job_config: Record<string, unknown> };
  const small = await startGateway({ ...base, client: { ...client, async_job_config: { ...client.async_job_config, max_result_size_mb: 1 } } });
  try {
    // 250 embeddings of 4,096 floats (mostly 0) are about 2 MB of JSON.
    const big = acceptedJob(await submitJson('embeddings', { model: 'openai/text-embedding-3-small', dimensions: 4096, input: Array.from({ length: 250 }, (_, i) => `text ${i}`) }, {}, small));
    const view = await finished('embeddings', big, 10_000, small);
    assert.equal(view.status, 'failed');
    assert.equal(view.status_code, 507);
    assert.match(view.error!.error.message, /max_result_size_mb/);
    const fits = acceptedJob(await submitJson('embeddings', { model: 'openai/text-embedding-3-small', input: 'one' }, {}, small));
    assert.equal((await finished('embeddings', fits, 10_000, small)).status, 'completed');
  } finally {
    await small.stop();
  }
});
