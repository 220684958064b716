// Async jobs under the provider-compatible prefixes: every prefix the sync OpenAI-format routes are
// served at (/openai/v1, /openai, /litellm/v1, /langchain/v1, /pydanticai/v1) takes `{base}/async/...`
// too, so an SDK whose base URL is one of those submits and polls jobs without a second base URL.
// A real gateway process on SQLite against the mock provider.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { speechAudio } from '../mock-provider/media-files.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
let gateway: InProcessGateway;

const VK_A = 'sk-bf-alpha-0123456789';
const VK_B = 'sk-bf-bravo-0123456789';
const PREFIXES = ['/openai/v1', '/openai', '/litellm/v1', '/langchain/v1', '/pydanticai/v1'];

const grants = [{ provider: 'openai', allowed_models: ['gpt-4o-mini', 'text-embedding-3-small', 'whisper-1'], key_ids: ['*'], weight: 1 }];
const vk = (id: string, value: string) => ({ id, name: id, value, provider_configs: grants });

before(async () => {
  mock = await startMockProvider();
  gateway = await startGateway({
    providers: mockProviders(mock.url),
    logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
    client: { enforce_auth_on_inference: true, async_job_config: { lease_seconds: 2, poll_interval_ms: 100, sweep_interval_seconds: 1 } },
    governance: { virtual_keys: [vk('alpha', VK_A), vk('bravo', VK_B)] },
  });
});
after(async () => {
  await gateway?.stop();
  await mock?.close();
});

interface JobView {
  id: string;
  status: string;
  status_code?: number;
  result?: Record<string, unknown>;
  error?: { error: { message: string; param?: string } };
}

async function post(path: string, body: unknown, key = VK_A): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': key }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function get(path: string, key = VK_A): Promise<{ status: number; body: JobView }> {
  const res = await fetch(`${gateway.url}${path}`, { headers: { 'x-bf-vk': key } });
  return { status: res.status, body: (await res.json()) as JobView };
}

async function finished(path: string): Promise<JobView> {
  let last: { status: number; body: JobView } | undefined;
  await eventually(async () => {
    last = await get(path);
    assert.equal(last.status, 200, JSON.stringify(last.body));
  }, 10_000);
  return last!.body;
}

describe('async jobs under every OpenAI-compatible prefix', () => {
  for (const prefix of PREFIXES) {
    test(`${prefix}/async/chat/completions: 202 at submit, the completion when polled under the same prefix`, async () => {
      const submitted = await post(`${prefix}/async/chat/completions`, { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `via ${prefix}` }] });
      assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
      assert.equal(submitted.body.status, 'pending');
      const done = await finished(`${prefix}/async/chat/completions/${String(submitted.body.id)}`);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.equal(done.status_code, 200);
      assert.equal((done.result!.choices as { message: { content: string } }[])[0]!.message.content, `Mock reply to: via ${prefix}`);
    });
  }

  test('the OpenAI SDK with base URL {gateway}/openai/v1 submits and polls with raw requests', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: VK_A, maxRetries: 0 });
    const job = await client.post<Record<string, unknown>>('/async/embeddings', { body: { model: 'openai/text-embedding-3-small', input: 'embed later' } });
    assert.equal(job.status, 'pending');
    let view: JobView | undefined;
    await eventually(async () => {
      view = await client.get<JobView>(`/async/embeddings/${String(job.id)}`);
      assert.equal(view.status, 'completed');
    }, 10_000);
    assert.equal((view!.result!.data as { embedding: number[] }[])[0]!.embedding.length, 8);
  });

  test('a job is one job: submitted under /litellm/v1, polled under /v1 and /openai', async () => {
    const submitted = await post('/litellm/v1/async/embeddings', { model: 'openai/text-embedding-3-small', input: 'shared' });
    assert.equal(submitted.status, 202);
    const id = String(submitted.body.id);
    const viaV1 = await finished(`/v1/async/embeddings/${id}`);
    assert.equal(viaV1.status, 'completed');
    const viaOpenai = await get(`/openai/async/embeddings/${id}`);
    assert.equal(viaOpenai.status, 200);
    assert.equal(viaOpenai.body.id, id);
    // The poll path names the operation: the same id under another operation is not that job.
    assert.equal((await get(`/openai/v1/async/chat/completions/${id}`)).status, 404);
  });

  test('a multipart operation (audio/transcriptions) under /langchain/v1', async () => {
    const form = new FormData();
    form.set('model', 'openai/whisper-1');
    form.set('file', new Blob([speechAudio('mp3', 'Heard through langchain')], { type: 'audio/mpeg' }), 'speech.mp3');
    const res = await fetch(`${gateway.url}/langchain/v1/async/audio/transcriptions`, { method: 'POST', headers: { 'x-bf-vk': VK_A }, body: form });
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 202, JSON.stringify(body));
    const done = await finished(`/langchain/v1/async/audio/transcriptions/${String(body.id)}`);
    assert.equal(done.result!.text, 'Heard through langchain');
  });

  test('the prefixed routes keep the /v1 rules: streaming refused, another key cannot read the job', async () => {
    const streamed = await post('/pydanticai/v1/async/chat/completions', { model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(streamed.status, 400);
    assert.equal((streamed.body.error as { param?: string }).param, 'stream');
    const submitted = await post('/openai/async/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'mine' }] });
    assert.equal(submitted.status, 202);
    const other = await get(`/openai/async/chat/completions/${String(submitted.body.id)}`, VK_B);
    assert.equal(other.status, 404);
    const unauthenticated = await fetch(`${gateway.url}/openai/v1/async/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/text-embedding-3-small', input: 'x' }) });
    assert.equal(unauthenticated.status, 401);
  });
});
