// POST /v1/ocr through the gateway with Mistral's official SDK (client.ocr.process), against the
// mock provider speaking Mistral's OCR API: documents by data URL (a real two-page PDF and a PNG),
// by http URL and by uploaded file id, page selection, the OpenAI-compatible and framework
// prefixes, the async variant; governed like chat (virtual-key grants, a routing rule on
// request_type, a rate limit, a budget charged per page), logged as `ocr` with its cost, counted
// in metrics. A provider without OCR gives the unsupported-operation 400; bad input a 400 naming the field.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Mistral } from '@mistralai/mistralai';
import { MistralError } from '@mistralai/mistralai/models/errors/mistralerror.js';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { createServiceAccount } from '../mock-provider/vertex.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { compat } from '../helpers/compat.ts';
import { startReceiver, type Receiver, type Received } from '../helpers/webhook-receiver.ts';

const VK = 'sk-bf-ocr-vk-0123456789';
const CHAT_ONLY_VK = 'sk-bf-ocr-chat-only-0123456789';
const BUDGET_VK = 'sk-bf-ocr-budget-0123456789';
const LIMITED_VK = 'sk-bf-ocr-limited-0123456789';

let mock: MockProvider;
let gw: InProcessGateway;

const ocrGrants = [
  { provider: 'mistral', allowed_models: ['mistral-ocr-latest', 'mistral-ocr-2505'], key_ids: ['*'], weight: 1 },
  { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 },
];

before(async () => {
  mock = await startMockProvider();
  gw = await startGateway({
    providers: { ...mockProviders(mock.url), mistral: mockProvider(mock.url, 'mistral') },
    logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
    client: { enable_logging: true, enforce_auth_on_inference: true, async_job_config: { lease_seconds: 2, poll_interval_ms: 100, sweep_interval_seconds: 1 } },
    governance: {
      // 0.005 USD: two 2-page documents at OCR 3's $2 per 1,000 pages (0.004 each) spend it.
      budgets: [{ id: 'ocr-budget', max_limit: 0.005, reset_duration: '1d' }],
      rate_limits: [{ id: 'ocr-rl', request_max_limit: 2, request_reset_duration: '1h' }],
      virtual_keys: [
        { id: 'ocr-vk', name: 'ocr-vk', value: VK, provider_configs: ocrGrants },
        { id: 'chat-only', name: 'chat-only', value: CHAT_ONLY_VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] },
        { id: 'ocr-budget-vk', name: 'ocr-budget-vk', value: BUDGET_VK, budget_id: 'ocr-budget', provider_configs: ocrGrants },
        { id: 'ocr-limited-vk', name: 'ocr-limited-vk', value: LIMITED_VK, rate_limit_id: 'ocr-rl', provider_configs: ocrGrants },
      ],
      routing_rules: [
        { name: 'old ocr', cel_expression: 'request_type == "ocr" && headers["x-ocr-tier"] == "old"', targets: [{ provider: 'mistral', model: 'mistral-ocr-2505', weight: 1 }], priority: 1 },
      ],
    },
  });
});

after(async () => {
  await gw?.stop();
  await mock?.close();
});

/** A minimal PDF with one page per text, each page's text drawn by its own content stream. */
function pdf(texts: string[]): Buffer {
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', ''];
  const kids: string[] = [];
  for (const text of texts) {
    const page = objects.length + 1;
    kids.push(`${page} 0 R`);
    const content = `BT /F1 12 Tf 72 720 Td (${text.replace(/[()\\]/g, '\\$&')}) Tj ET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${page + 1} 0 R >>`);
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${texts.length} >>`;
  let out = '%PDF-1.4\n';
  objects.forEach((o, i) => (out += `${i + 1} 0 obj\n${o}\nendobj\n`));
  return Buffer.from(`${out}trailer\n<< /Root 1 0 R >>\n%%EOF\n`, 'latin1');
}

/** A PNG header of the given size (the mock reads the IHDR's width and height). */
function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

const TWO_PAGES = `data:application/pdf;base64,${pdf(['Invoice 42 total 17 EUR', 'Thank you for your order']).toString('base64')}`;

const sdk = (key = VK, serverURL = gw.url) => new Mistral({ apiKey: key, serverURL });

async function failure(p: Promise<unknown>): Promise<{ status: number; body: { error: { message: string; type?: string; param?: string | null; code?: string } } }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MistralError) return { status: err.statusCode, body: JSON.parse(err.body) };
    throw err;
  }
  assert.fail('the call succeeded');
}

async function post(path: string, body: unknown, key = VK, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': key, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const lastUpstream = () => mock.requests.at(-1)!;

describe('POST /v1/ocr', () => {
  test(`Mistral's SDK reads a two-page PDF data URL: pages with markdown and dimensions, usage in pages ${compat('/v1', 'ocr.process', 'openai')}`, async () => {
    const res = await sdk().ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', documentUrl: TWO_PAGES } });
    assert.equal(res.pages.length, 2);
    assert.deepEqual(res.pages.map((p) => p.index), [0, 1]);
    assert.equal(res.pages[0].markdown, '# Page 1\n\nInvoice 42 total 17 EUR');
    assert.equal(res.pages[1].markdown, '# Page 2\n\nThank you for your order');
    assert.deepEqual(res.pages[0].dimensions, { dpi: 200, height: 2339, width: 1654 });
    assert.equal(res.usageInfo.pagesProcessed, 2);
    const up = lastUpstream();
    assert.equal(up.path, '/mistral/v1/ocr');
    // The provider gets its own model name, and the document as the client sent it.
    const sent = up.body as { model: string; document: { document_url: string } };
    assert.equal(sent.model, 'mistral-ocr-latest');
    assert.equal(sent.document.document_url, TWO_PAGES);
    assert.equal(up.headers.authorization, 'Bearer sk-mistral-test', 'the provider key, not the virtual key, goes upstream');
  });

  test('page selection: a list of indices, and a range string', async () => {
    const one = await sdk().ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', documentUrl: TWO_PAGES }, pages: [1] });
    assert.deepEqual(one.pages.map((p) => [p.index, p.markdown]), [[1, '# Page 2\n\nThank you for your order']]);
    assert.equal(one.usageInfo.pagesProcessed, 1);
    const range = await post('/v1/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: 'https://example.com/report.pdf' }, pages: '0-1' });
    assert.equal(range.status, 200, JSON.stringify(range.body));
    assert.deepEqual((range.body.pages as { index: number }[]).map((p) => p.index), [0, 1]);
  });

  test('an image (PNG data URL) is one page with its size, and its image when include_image_base64', async () => {
    const image = `data:image/png;base64,${png(640, 480).toString('base64')}`;
    const res = await sdk().ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'image_url', imageUrl: image }, includeImageBase64: true });
    assert.equal(res.pages.length, 1);
    assert.deepEqual(res.pages[0].dimensions, { dpi: 72, height: 480, width: 640 });
    assert.equal(res.pages[0].images.length, 1);
    assert.equal(res.pages[0].images[0].imageBase64, image);
    assert.equal(res.pages[0].images[0].bottomRightX, 640);
  });

  test('a document uploaded to Mistral is read by its file id', async () => {
    // The user uploads to Mistral directly (the gateway's Files API serves OpenAI-format file providers).
    const uploaded = await sdk('sk-mistral-test', `${mock.url}/mistral`).files.upload({
      file: { fileName: 'letter.pdf', content: pdf(['Dear customer', 'Regards', 'PS: see attachment']) },
      purpose: 'ocr',
    });
    const res = await sdk().ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'file', fileId: uploaded.id }, pages: [0, 2] });
    assert.deepEqual(res.pages.map((p) => p.markdown), ['# Page 1\n\nDear customer', '# Page 3\n\nPS: see attachment']);
    const missing = await failure(sdk().ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'file', fileId: 'no-such-file' } }));
    assert.equal(missing.status, 404);
    assert.match(missing.body.error.message, /File no-such-file not found/);
  });

  // The SDK's server URL is the prefix without /v1: it calls `{serverURL}/v1/ocr`.
  for (const prefix of ['/openai/v1', '/litellm/v1', '/langchain/v1', '/pydanticai/v1'] as const) {
    test(`served under ${prefix} ${compat(prefix, 'ocr.process', 'openai')}`, async () => {
      const res = await sdk(VK, `${gw.url}${prefix.slice(0, -3)}`).ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', documentUrl: TWO_PAGES }, pages: [0] });
      assert.equal(res.pages[0].markdown, '# Page 1\n\nInvoice 42 total 17 EUR');
      assert.equal(lastUpstream().path, '/mistral/v1/ocr');
    });
  }

  test('and under /openai without /v1, as OpenAI-style base URLs are written both ways', async () => {
    const r = await post('/openai/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: TWO_PAGES }, pages: [0] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((r.body.pages as { markdown: string }[])[0].markdown, '# Page 1\n\nInvoice 42 total 17 EUR');
    assert.equal((r.body.extra_fields as { request_type: string }).request_type, 'ocr');
  });

  test('a provider without document OCR gives the unsupported-operation 400, and nothing goes upstream', async () => {
    const before = mock.requests.length;
    const r = await failure(sdk().ocr.process({ model: 'anthropic/claude-sonnet-4-5', document: { type: 'document_url', documentUrl: TWO_PAGES } }));
    assert.equal(r.status, 400);
    assert.equal(r.body.error.type, 'unsupported_operation');
    assert.match(r.body.error.message, /operation 'ocr' is not supported by provider 'anthropic'/);
    assert.equal(mock.requests.length, before);
  });

  test('bad input is a 400 naming the field', async () => {
    const noDoc = await post('/v1/ocr', { model: 'mistral/mistral-ocr-latest' });
    assert.equal(noDoc.status, 400);
    assert.equal((noDoc.body.error as { param: string }).param, 'document');
    const badPages = await post('/v1/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: TWO_PAGES }, pages: 'first' });
    assert.equal(badPages.status, 400);
    assert.equal((badPages.body.error as { param: string }).param, 'pages');
    const badType = await post('/v1/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'video_url', video_url: 'x' } });
    assert.equal(badType.status, 400);
    assert.match((badType.body.error as { param: string }).param, /^document/);
  });

  test("the provider's own failure (an unreachable document, a page past the end) reaches the client with its status and message", async () => {
    const r = await failure(sdk().ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', documentUrl: 'https://unreachable.example/doc.pdf' } }));
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /Failed to download document/);
    const beyond = await failure(sdk().ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', documentUrl: TWO_PAGES }, pages: [5] }));
    assert.equal(beyond.status, 400);
    assert.match(beyond.body.error.message, /Page 5 is out of range/);
  });

  test('governed: no virtual key is a 401, a key without an OCR model a 403', async () => {
    assert.equal((await post('/v1/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: TWO_PAGES } }, '')).status, 401);
    const denied = await failure(sdk(CHAT_ONLY_VK).ocr.process({ model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', documentUrl: TWO_PAGES } }));
    assert.equal(denied.status, 403);
  });

  test('a routing rule on request_type sends OCR requests to the model it names', async () => {
    const r = await post('/v1/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: TWO_PAGES } }, VK, { 'x-ocr-tier': 'old' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((lastUpstream().body as { model: string }).model, 'mistral-ocr-2505');
  });

  test('logged as ocr, with the cost of its pages', async () => {
    let hit: { object: string; provider: string; model: string; cost?: number; virtual_key_id?: string; status: string } | undefined;
    await eventually(async () => {
      const res = await fetch(`${gw.url}/api/logs?limit=200`);
      const logs = ((await res.json()) as { logs: NonNullable<typeof hit>[] }).logs;
      hit = logs.find((e) => e.object === 'ocr' && e.model === 'mistral-ocr-latest' && e.status === 'success' && e.cost !== undefined && Math.abs(e.cost - 0.004) < 1e-9);
      assert.ok(hit, 'no 2-page OCR record at 0.004 USD yet');
    }, 5000);
    assert.equal(hit!.provider, 'mistral');
    assert.equal(hit!.virtual_key_id, 'ocr-vk');
    // OCR 25.05 costs half: the routed request's record says so.
    await eventually(async () => {
      const logs = ((await (await fetch(`${gw.url}/api/logs?limit=200`)).json()) as { logs: { object: string; model: string; cost?: number }[] }).logs;
      assert.ok(logs.some((e) => e.object === 'ocr' && e.model === 'mistral-ocr-2505' && Math.abs((e.cost ?? 0) - 0.002) < 1e-9));
    }, 5000);
  });

  test('a budget is charged per page and stops OCR once spent', async () => {
    const call = () => post('/v1/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: TWO_PAGES } }, BUDGET_VK);
    assert.equal((await call()).status, 200);
    assert.equal((await call()).status, 200);
    await eventually(async () => {
      const over = await call();
      assert.equal(over.status, 402, JSON.stringify(over.body));
      assert.equal((over.body.error as { code: string }).code, 'budget_exceeded');
    }, 5000);
  });

  test('a request rate limit applies to OCR', async () => {
    const call = () => post('/v1/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: TWO_PAGES }, pages: [0] }, LIMITED_VK);
    assert.equal((await call()).status, 200);
    assert.equal((await call()).status, 200);
    const third = await call();
    assert.equal(third.status, 429);
  });

  test('/v1/async/ocr: 202 at submit, the OCR answer when polled', async () => {
    const submitted = await post('/v1/async/ocr', { model: 'mistral/mistral-ocr-latest', document: { type: 'document_url', document_url: TWO_PAGES } });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    let job: { status: string; result?: { pages: { markdown: string }[]; usage_info: { pages_processed: number } } } | undefined;
    await eventually(async () => {
      const res = await fetch(`${gw.url}/v1/async/ocr/${String(submitted.body.id)}`, { headers: { 'x-bf-vk': VK } });
      job = (await res.json()) as typeof job;
      assert.equal(job!.status, 'completed', JSON.stringify(job));
    }, 10_000);
    assert.equal(job!.result!.usage_info.pages_processed, 2);
    assert.equal(job!.result!.pages[1].markdown, '# Page 2\n\nThank you for your order');
  });

  test('counted in the request metrics under operation "ocr"', async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(text, /skybridge_requests_total\{operation="ocr",provider="mistral",model="mistral-ocr-latest",status="200"\} [1-9]/);
  });
});

describe('/v1/async/ocr with a webhook', () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  let receiver: Receiver;
  let hooked: InProcessGateway;

  before(async () => {
    receiver = await startReceiver();
    receiver.setSecret(SECRET);
    hooked = await startGateway(
      {
        providers: { mistral: mockProvider(mock.url, 'mistral') },
        logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
        client: { async_job_config: { lease_seconds: 2, poll_interval_ms: 100, sweep_interval_seconds: 1 } },
        // Deliveries to private-network receivers need management authentication configured.
        governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'ocr-webhook-admin-password' } },
        webhooks: [{ name: 'ocr-done', url: receiver.url, events: ['async_job.completed', 'async_job.failed'], secret: 'env.SKYBRIDGE_TEST_OCR_WH_SECRET', allow_private_network: true, include_response: true }],
      },
      { env: { SKYBRIDGE_TEST_OCR_WH_SECRET: SECRET } },
    );
  });
  after(async () => {
    await hooked?.stop();
    await receiver?.close();
  });

  async function submitted(document: unknown): Promise<Received> {
    const res = await fetch(`${hooked.url}/v1/async/ocr`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bf-async-webhook': 'ocr-done' },
      body: JSON.stringify({ model: 'mistral/mistral-ocr-latest', document }),
    });
    assert.equal(res.status, 202);
    const id = ((await res.json()) as { id: string }).id;
    let r: Received | undefined;
    await eventually(() => {
      r = receiver.received.find((x) => x.json.data.job_id === id);
      assert.ok(r, `no delivery for job ${id}`);
    }, 15_000);
    return r!;
  }

  test('a finished OCR job is delivered, signed, with its pages inlined; a failed one with the error', async () => {
    const done = await submitted({ type: 'document_url', document_url: TWO_PAGES });
    assert.equal(done.verified, true);
    assert.equal(done.json.event, 'async_job.completed');
    assert.equal(done.json.data.request_type, 'ocr');
    const response = done.json.data.response as { pages: { markdown: string }[]; usage_info: { pages_processed: number } };
    assert.equal(response.usage_info.pages_processed, 2);
    assert.equal(response.pages[0].markdown, '# Page 1\n\nInvoice 42 total 17 EUR');
    const failed = await submitted({ type: 'document_url', document_url: 'https://unreachable.example/doc.pdf' });
    assert.equal(failed.json.event, 'async_job.failed');
    assert.equal(failed.json.data.status_code, 400);
    assert.match(JSON.stringify(failed.json.data.error), /Failed to download document/);
  });
});

describe('OCR on Vertex AI (Mistral OCR as a partner model)', () => {
  let onVertex: InProcessGateway;

  before(async () => {
    const account = createServiceAccount(mock.url);
    onVertex = await startGateway(
      {
        providers: {
          vertex: {
            keys: [{ name: 'sa', value: '', weight: 1, vertex_key_config: { project_id: 'mock-project', region: 'us-east5', auth_credentials: 'env.OCR_VERTEX_SA' } }],
            network_config: { base_url: `${mock.url}/vertex`, max_retries: 0 },
          },
        },
        logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
      },
      { env: { OCR_VERTEX_SA: JSON.stringify(account) } },
    );
  });
  after(() => onVertex?.stop());

  test(`a data URL document goes to publishers/mistralai rawPredict with the service account's token ${compat('/v1', 'ocr.process', 'vertex')}`, async () => {
    const res = await sdk('not-needed', onVertex.url).ocr.process({ model: 'vertex/mistral-ocr-2505', document: { type: 'document_url', documentUrl: TWO_PAGES }, pages: [1] });
    assert.deepEqual(res.pages.map((p) => p.markdown), ['# Page 2\n\nThank you for your order']);
    assert.equal(res.usageInfo.pagesProcessed, 1);
    const up = lastUpstream();
    assert.equal(up.path, '/vertex/v1/projects/mock-project/locations/us-east5/publishers/mistralai/models/mistral-ocr-2505:rawPredict');
    assert.match(String(up.headers.authorization), /^Bearer /);
    assert.equal((up.body as { model: string }).model, 'mistral-ocr-2505');
  });

  test('a URL or a file id is refused before it goes out: Vertex reads documents inline only', async () => {
    const before = mock.requests.filter((r) => r.path.includes('/publishers/')).length;
    const url = await failure(sdk('not-needed', onVertex.url).ocr.process({ model: 'vertex/mistral-ocr-2505', document: { type: 'document_url', documentUrl: 'https://example.com/a.pdf' } }));
    assert.equal(url.status, 400);
    assert.equal(url.body.error.param, 'document.document_url');
    const file = await failure(sdk('not-needed', onVertex.url).ocr.process({ model: 'vertex/mistral-ocr-2505', document: { type: 'file', fileId: 'f-1' } }));
    assert.equal(file.status, 400);
    assert.equal(file.body.error.param, 'document.file_id');
    assert.equal(mock.requests.filter((r) => r.path.includes('/publishers/')).length, before);
  });

  test("priced at Mistral's page price", async () => {
    await eventually(async () => {
      const logs = ((await (await fetch(`${onVertex.url}/api/logs?limit=50`)).json()) as { logs: { object: string; provider: string; cost?: number }[] }).logs;
      assert.ok(logs.some((e) => e.object === 'ocr' && e.provider === 'vertex' && Math.abs((e.cost ?? 0) - 0.001) < 1e-9), JSON.stringify(logs));
    }, 5000);
  });
});

describe('OCR on Azure AI Foundry (Mistral Document AI)', () => {
  let onAzure: InProcessGateway;

  before(async () => {
    onAzure = await startGateway(
      {
        providers: {
          azure: {
            keys: [
              {
                name: 'foundry',
                value: 'env.OCR_FOUNDRY_KEY',
                weight: 1,
                azure_key_config: { endpoint: `${mock.url}/azure`, deployments: { 'mistral-document-ai-2505': 'docs-ai' }, api_version: '2024-10-21' },
              },
            ],
            network_config: { max_retries: 0 },
            // Foundry's page price is not a list price the gateway carries: the operator sets it.
            pricing_overrides: [{ model_pattern: 'mistral-document-ai-*', match_type: 'wildcard', ocr_cost_per_page: 0.003 }],
          },
        },
        logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
      },
      { env: { OCR_FOUNDRY_KEY: 'foundry-key-1' } },
    );
  });
  after(() => onAzure?.stop());

  for (const prefix of ['/v1', '/openai/v1'] as const) {
    test(`a data URL document goes to the resource's /providers/mistral/azure/ocr with the deployment and a bearer key ${compat(prefix, 'ocr.process', 'azure')}`, async () => {
      const serverURL = prefix === '/v1' ? onAzure.url : `${onAzure.url}/openai`;
      const res = await sdk('not-needed', serverURL).ocr.process({ model: 'azure/mistral-document-ai-2505', document: { type: 'document_url', documentUrl: TWO_PAGES } });
      assert.deepEqual(res.pages.map((p) => p.markdown), ['# Page 1\n\nInvoice 42 total 17 EUR', '# Page 2\n\nThank you for your order']);
      assert.equal(res.usageInfo.pagesProcessed, 2);
      const up = lastUpstream();
      assert.equal(up.path, '/azure/providers/mistral/azure/ocr', 'at the resource root, not below /openai');
      assert.equal(up.query['api-version'], undefined);
      assert.equal(up.headers.authorization, 'Bearer foundry-key-1');
      assert.equal(up.headers['api-key'], undefined);
      assert.equal((up.body as { model: string }).model, 'docs-ai', "the key's deployment");
    });
  }

  test('an image data URL is one page with its dimensions', async () => {
    const res = await sdk('not-needed', onAzure.url).ocr.process({ model: 'azure/mistral-document-ai-2505', document: { type: 'image_url', imageUrl: `data:image/png;base64,${png(640, 480).toString('base64')}` } });
    assert.equal(res.pages.length, 1);
    assert.deepEqual([res.pages[0].dimensions?.width, res.pages[0].dimensions?.height], [640, 480]);
  });

  test('a URL or a file id is refused before it goes out: Foundry reads documents inline only', async () => {
    const before = mock.requests.filter((r) => r.path.includes('/providers/mistral/')).length;
    const url = await failure(sdk('not-needed', onAzure.url).ocr.process({ model: 'azure/mistral-document-ai-2505', document: { type: 'image_url', imageUrl: 'https://example.com/scan.png' } }));
    assert.equal(url.status, 400);
    assert.equal(url.body.error.param, 'document.image_url');
    assert.equal(url.body.error.code, 'unsupported_document');
    const file = await failure(sdk('not-needed', onAzure.url).ocr.process({ model: 'azure/mistral-document-ai-2505', document: { type: 'file', fileId: 'f-1' } }));
    assert.equal(file.status, 400);
    assert.equal(file.body.error.param, 'document.file_id');
    assert.equal(mock.requests.filter((r) => r.path.includes('/providers/mistral/')).length, before);
  });

  test('priced per page at the configured Foundry price', async () => {
    await eventually(async () => {
      const logs = ((await (await fetch(`${onAzure.url}/api/logs?limit=50`)).json()) as { logs: { object: string; provider: string; cost?: number }[] }).logs;
      assert.ok(logs.some((e) => e.object === 'ocr' && e.provider === 'azure' && Math.abs((e.cost ?? 0) - 0.006) < 1e-9), JSON.stringify(logs));
    }, 5000);
  });
});
