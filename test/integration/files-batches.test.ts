// OpenAI's Files and Batch APIs through the gateway with the official SDK: upload, list, retrieve,
// download, delete; a batch over an uploaded .jsonl file from validating to completed, its output
// file read back; cancel; provider choice by query, header and body; the unsupported-operation 400.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
before(async () => {
  // groq (OpenAI's Files and Batch API too) at the same mock, told apart by its key.
  stack = await startStack((u) => ({
    providers: {
      ...mockProviders(u),
      groq: { keys: [{ name: 'g', value: 'sk-groq-test', weight: 1 }], network_config: { base_url: `${u}/openai` } },
    },
  }));
});
after(() => stack.close());

const chatLine = (id: string, text: string, url = '/v1/chat/completions') =>
  JSON.stringify({ custom_id: id, method: 'POST', url, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] } });

const JSONL = `${chatLine('req-1', 'first question')}\n${chatLine('req-2', 'second question')}\n`;

function lastUpstream() {
  const r = stack.mock.requests.at(-1);
  assert.ok(r, 'the upstream was called');
  return r;
}

async function upload(client: OpenAI, text = JSONL, name = 'batch.jsonl', opts?: OpenAI.RequestOptions) {
  return client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'batch' }, opts);
}

describe('files', () => {
  test(`upload, retrieve, list, download and delete ${compat('/v1', 'files', 'openai')}`, async () => {
    const { client } = stack;
    const file = await upload(client);
    assert.match(file.id, /^file-/);
    assert.equal(file.object, 'file');
    assert.equal(file.purpose, 'batch');
    assert.equal(file.filename, 'batch.jsonl');
    assert.equal(file.bytes, Buffer.byteLength(JSONL));
    assert.equal((file as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'openai');
    const up = lastUpstream();
    assert.equal(up.path, '/openai/v1/files');
    assert.equal(up.headers.authorization, 'Bearer sk-openai-test');
    assert.match(String(up.headers['content-type']), /^multipart\/form-data; boundary=/);

    const got = await client.files.retrieve(file.id);
    assert.equal(got.id, file.id);
    assert.equal(got.bytes, file.bytes);

    const ids: string[] = [];
    for await (const f of client.files.list({ purpose: 'batch' })) ids.push(f.id);
    assert.ok(ids.includes(file.id));
    assert.equal(lastUpstream().query.purpose, 'batch');

    const content = await client.files.content(file.id);
    assert.equal(await content.text(), JSONL);

    const deleted = await client.files.delete(file.id);
    assert.deepEqual([deleted.id, deleted.deleted], [file.id, true]);
    const err = await client.files.retrieve(file.id).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
    assert.match(err.message, /No such File object/);
  });

  test('binary content comes back byte for byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const file = await stack.client.files.create({ file: await toFile(bytes, 'blob.bin', { type: 'application/octet-stream' }), purpose: 'user_data' });
    const content = await stack.client.files.content(file.id);
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), bytes);
  });

  test('an upload without purpose is a 400 naming it, and nothing goes upstream', async () => {
    const before = stack.mock.requests.length;
    const form = new FormData();
    form.append('file', new File([JSONL], 'batch.jsonl'));
    const res = await fetch(`${stack.gateway.url}/v1/files`, { method: 'POST', body: form });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { is_bifrost_error: boolean; error: { param: string } };
    assert.equal(body.error.param, 'purpose');
    assert.equal(body.is_bifrost_error, true);
    assert.equal(stack.mock.requests.length, before);
  });

  test('a JSON body where a form is expected is a 400', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/files`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"purpose":"batch"}' });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /multipart\/form-data/);
  });

  test("the provider's own validation comes back with its status, marked as the provider's", async () => {
    const err = await upload(stack.client, JSONL, 'batch.txt').catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.match(err.message, /Must be \.jsonl/);
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new File([JSONL], 'batch.txt'));
    const res = await fetch(`${stack.gateway.url}/v1/files`, { method: 'POST', body: form });
    const body = (await res.json()) as { is_bifrost_error: boolean; status_code: number; extra_fields: { provider: string } };
    assert.deepEqual([res.status, body.is_bifrost_error, body.status_code, body.extra_fields.provider], [400, false, 400, 'openai']);
  });

  test('the provider is chosen by query parameter, header or form field', async () => {
    await upload(stack.client, JSONL, 'batch.jsonl', { query: { provider: 'groq' } });
    assert.equal(lastUpstream().headers.authorization, 'Bearer sk-groq-test');
    assert.equal(lastUpstream().query.provider, undefined, 'the gateway parameter is not forwarded');
    await stack.client.files.list({}, { headers: { 'x-model-provider': 'groq' } });
    assert.equal(lastUpstream().headers.authorization, 'Bearer sk-groq-test');

    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('provider', 'groq');
    form.append('file', new File([JSONL], 'batch.jsonl'));
    const res = await fetch(`${stack.gateway.url}/v1/files`, { method: 'POST', body: form });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(lastUpstream().headers.authorization, 'Bearer sk-groq-test');
    assert.equal(((await res.json()) as { extra_fields: { provider: string } }).extra_fields.provider, 'groq');
  });

  test('a provider without a Files API is the unsupported-operation 400', async () => {
    const err = await stack.client.files.list({}, { query: { provider: 'anthropic' } }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.type, 'unsupported_operation');
    assert.match(err.message, /files.*anthropic/);
  });

  test('an unknown provider is a 400', async () => {
    const err = await stack.client.files.list({}, { query: { provider: 'nope' } }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.match(err.message, /provider 'nope' is not configured/);
  });

  for (const base of ['/openai', '/openai/v1', '/litellm/v1']) {
    test(`served under ${base} ${compat(base, 'files', 'openai')}`, async () => {
      const client = new OpenAI({ baseURL: `${stack.gateway.url}${base}`, apiKey: 'x', maxRetries: 0 });
      const file = await upload(client);
      assert.equal((await client.files.retrieve(file.id)).id, file.id);
    });
  }
});

describe('batches', () => {
  test(`validating, in_progress, completed; the output file has one answer per line ${compat('/v1', 'batches', 'openai')}`, async () => {
    const { client } = stack;
    const input = await upload(client);
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    assert.match(created.id, /^batch_/);
    assert.equal(created.status, 'validating');
    assert.deepEqual(created.metadata, { job: 'nightly' });
    assert.equal(lastUpstream().path, '/openai/v1/batches');

    const statuses: string[] = [created.status];
    let batch = created;
    while (batch.status !== 'completed' && statuses.length < 5) {
      batch = await client.batches.retrieve(created.id);
      statuses.push(batch.status);
    }
    assert.deepEqual(statuses, ['validating', 'in_progress', 'completed']);
    assert.deepEqual(batch.request_counts, { total: 2, completed: 2, failed: 0 });
    assert.ok(batch.output_file_id);

    const output = await (await client.files.content(batch.output_file_id)).text();
    const lines = output.trim().split('\n').map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; body: { choices: { message: { content: string } }[] } } });
    assert.deepEqual(lines.map((l) => l.custom_id), ['req-1', 'req-2']);
    assert.deepEqual(lines.map((l) => l.response.status_code), [200, 200]);
    assert.deepEqual(lines.map((l) => l.response.body.choices[0].message.content), ['Mock reply to: first question', 'Mock reply to: second question']);

    const ids: string[] = [];
    for await (const b of client.batches.list()) ids.push(b.id);
    assert.ok(ids.includes(created.id));
  });

  test('cancel: cancelling, then cancelled', async () => {
    const input = await upload(stack.client);
    const created = await stack.client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const cancelled = await stack.client.batches.cancel(created.id);
    assert.equal(cancelled.status, 'cancelling');
    assert.equal(lastUpstream().path, `/openai/v1/batches/${created.id}/cancel`);
    assert.equal((await stack.client.batches.retrieve(created.id)).status, 'cancelled');
    const again = await stack.client.batches.cancel(created.id).catch((e: unknown) => e);
    assert.ok(again instanceof OpenAI.ConflictError, String(again));
  });

  test('a line for another endpoint fails the batch, listing the line', async () => {
    const input = await upload(stack.client, `${chatLine('a', 'ok')}\n${chatLine('b', 'wrong', '/v1/embeddings')}\n`);
    const created = await stack.client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await stack.client.batches.retrieve(created.id);
    assert.equal(batch.status, 'failed');
    assert.equal(batch.errors?.data?.[0]?.line, 2);
    assert.equal(batch.errors?.data?.[0]?.code, 'mismatched_endpoint');
  });

  test("the reference gateway's model and provider fields choose the provider and are not forwarded", async () => {
    const input = await upload(stack.client);
    const res = await fetch(`${stack.gateway.url}/v1/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'groq/llama-3.1-8b-instant', input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { extra_fields: { provider: string } }).extra_fields.provider, 'groq');
    const up = lastUpstream();
    assert.equal(up.headers.authorization, 'Bearer sk-groq-test');
    assert.deepEqual(Object.keys(up.body as object).sort(), ['completion_window', 'endpoint', 'input_file_id']);
  });

  test('a missing input_file_id is a 400 naming it', async () => {
    const err = await stack.client.batches.create({ endpoint: '/v1/chat/completions', completion_window: '24h' } as unknown as OpenAI.BatchCreateParams).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal((err.error as { param?: string }).param, 'input_file_id');
  });

  test('an unknown batch is the provider 404', async () => {
    const err = await stack.client.batches.retrieve('batch_missing').catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
  });

  test('a provider without a Batch API is the unsupported-operation 400', async () => {
    const err = await stack.client.batches.list({}, { headers: { 'x-model-provider': 'gemini' } }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.type, 'unsupported_operation');
  });
});
