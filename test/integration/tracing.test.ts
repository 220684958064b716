// OpenTelemetry traces against a real OpenTelemetry Collector (built from Go modules by
// test/otel/build.sh, started here with OTLP HTTP and gRPC receivers and a file exporter): the
// gateway is driven with the official openai SDK and the test reads the spans the collector wrote.
// A client's traceparent is continued, each stage and upstream attempt is a child span, the attempt's
// context reaches the (mock) provider as its traceparent, the GenAI and gateway attributes are set,
// and no secret or content is recorded unless content capture is on.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startCollector, type CollectedSpan, type RunningCollector } from '../helpers/otel-collector.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';
import { apiClient } from '../helpers/api.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const VK = 'sk-bf-tracing-vk-0123456789abcdef';
const SERVER = 2;
const CLIENT = 3;

let mock: MockProvider;
let collector: RunningCollector;
let mcp: TestMcpServer;
let gw: InProcessGateway;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

const governance = {
  customers: [{ id: 'cust-1', name: 'Acme' }],
  teams: [{ id: 'team-1', name: 'Platform', customer_id: 'cust-1' }],
  virtual_keys: [
    {
      id: 'vk-trace',
      name: 'tracing key',
      value: VK,
      team_id: 'team-1',
      provider_configs: [
        { provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 },
        { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 },
      ],
    },
  ],
};
const otel = (service: string) => ({ name: 'otel', enabled: true, config: { service_name: service, collector_url: collector.httpUrl, trace_type: 'otel', protocol: 'http' } });

before(async () => {
  [mock, collector, mcp] = await Promise.all([startMockProvider(), startCollector(), startTestMcpServer()]);
  gw = await startGateway({
    providers: mockProviders(mock.url),
    governance,
    client: { enforce_auth_on_inference: true },
    vector_store: { enabled: true, type: 'sqlite' },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m', default_cache_key: 'shared' } }, otel('skybridge-test')],
  });
});

after(async () => {
  await gw?.stop();
  await Promise.all([mock?.close(), collector?.stop(), mcp?.close()]);
});

const client = (traceparent?: string, g = gw) =>
  new OpenAI({ baseURL: `${g.url}/v1`, apiKey: VK, maxRetries: 0, defaultHeaders: { ...(traceparent && { traceparent, tracestate: 'vendor=abc' }) } });

/** The spans of a trace, once the collector has `n` of them that pass `done`. */
async function trace(traceId: string, done: (spans: CollectedSpan[]) => boolean, g = gw): Promise<CollectedSpan[]> {
  let spans: CollectedSpan[] = [];
  await eventually(async () => {
    await g.gateway.services.tracing.flush();
    spans = collector.spans().filter((s) => s.traceId === traceId);
    assert.ok(done(spans), `trace ${traceId}: ${JSON.stringify(spans.map((s) => s.name))}`);
  }, 10_000);
  return spans;
}

const requestSpan = (spans: CollectedSpan[]) => spans.find((s) => s.kind === SERVER)!;
const childrenOf = (spans: CollectedSpan[], parent: CollectedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);
const stageNames = (spans: CollectedSpan[], parent: CollectedSpan) => childrenOf(spans, parent).filter((s) => s.name.startsWith('stage ')).map((s) => s.name).sort();

describe('traces exported over OTLP HTTP/protobuf', () => {
  test('a chat call continues the client trace: request span, stage spans and an attempt span whose context reaches the provider', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const { data: answer, response } = await client(`00-${traceId}-${parentId}-01`).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'trace me please' }] }).withResponse();
    assert.match(answer.choices[0].message.content ?? '', /trace me please/);
    const upstream = mock.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!;

    const spans = await trace(traceId, (s) => s.some((x) => x.kind === SERVER));
    const root = requestSpan(spans);
    assert.equal(root.parentSpanId, parentId, 'the request span is a child of the client span');
    assert.equal(root.name, 'chat openai/gpt-4o');
    assert.equal(root.resource['service.name'], 'skybridge-test');
    const a = root.attributes;
    assert.equal(a['gen_ai.operation.name'], 'chat');
    assert.equal(a['gen_ai.provider.name'], 'openai');
    assert.equal(a['gen_ai.request.model'], 'openai/gpt-4o');
    assert.equal(a['gen_ai.response.model'], answer.model);
    assert.equal(a['gen_ai.usage.input_tokens'], answer.usage!.prompt_tokens);
    assert.equal(a['gen_ai.usage.output_tokens'], answer.usage!.completion_tokens);
    assert.deepEqual(a['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(a['skybridge.virtual_key.id'], 'vk-trace');
    assert.equal(a['skybridge.virtual_key.name'], 'tracing key');
    assert.equal(a['skybridge.team.id'], 'team-1');
    assert.equal(a['skybridge.customer.id'], 'cust-1');
    assert.equal(a['skybridge.cache.hit'], false);
    assert.equal(a['http.response.status_code'], 200);
    assert.equal(a['skybridge.request.id'], response.headers.get('x-request-id'), 'the span names the request id the client got');
    assert.equal(typeof a['skybridge.cost.usd'], 'number');
    // Content is off by default.
    assert.equal(a['gen_ai.input.messages'], undefined);
    assert.equal(a['gen_ai.output.messages'], undefined);

    assert.deepEqual(stageNames(spans, root), ['stage identify', 'stage plan', 'stage semantic_cache']);
    const attempts = childrenOf(spans, root).filter((s) => s.kind === CLIENT);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].name, 'chat gpt-4o');
    assert.equal(attempts[0].attributes['http.response.status_code'], 200);
    assert.equal(attempts[0].attributes['gen_ai.provider.name'], 'openai');
    // The provider received the attempt span's context, and the client's tracestate.
    assert.equal(upstream.headers.traceparent, `00-${traceId}-${attempts[0].spanId}-01`);
    assert.equal(upstream.headers.tracestate, 'vendor=abc');
    for (const s of spans) assert.ok(s.startNs >= root.startNs && s.endNs <= root.endNs, `${s.name} lies inside the request span`);
  });

  test('a streamed chat call gets its finish reasons and usage from the stream', async () => {
    const traceId = hex(16);
    const stream = await client(`00-${traceId}-${hex(8)}-01`).chat.completions.create({
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'stream me along' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.match(text, /stream me along/);
    const spans = await trace(traceId, (s) => s.some((x) => x.kind === SERVER));
    const a = requestSpan(spans).attributes;
    assert.deepEqual(a['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(a['gen_ai.usage.output_tokens'], usage!.completion_tokens);
    assert.equal(a['gen_ai.response.model'], 'gpt-4o');
    assert.equal(childrenOf(spans, requestSpan(spans)).filter((s) => s.kind === CLIENT).length, 1);
  });

  test('a fallback is two attempt spans: the failed primary (error) and the fallback that answered', async () => {
    const traceId = hex(16);
    mock.inject({ format: 'openai', status: 500, times: 1 });
    const answer = await client(`00-${traceId}-${hex(8)}-01`).chat.completions.create({
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'fall back now' }],
      fallbacks: ['anthropic/claude-sonnet-4-5'],
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.match(answer.choices[0].message.content ?? '', /fall back now/);
    const spans = await trace(traceId, (s) => s.some((x) => x.kind === SERVER));
    const root = requestSpan(spans);
    const attempts = childrenOf(spans, root)
      .filter((s) => s.kind === CLIENT)
      .sort((x, y) => Number(x.startNs - y.startNs));
    assert.deepEqual(attempts.map((s) => [s.attributes['gen_ai.provider.name'], s.attributes['http.response.status_code'], s.status]), [
      ['openai', 500, 2],
      ['anthropic', 200, 0],
    ]);
    assert.equal(attempts[1].attributes['skybridge.fallback_index'], 1);
    assert.equal(root.attributes['gen_ai.provider.name'], 'anthropic');
    assert.equal(root.attributes['skybridge.fallback_index'], 1);
    assert.equal(root.status, 0, 'the request succeeded');
  });

  test('a cache hit is answered by the cache stage: no attempt span, hit type on the request span', async () => {
    const body = { model: 'openai/gpt-4o', messages: [{ role: 'user' as const, content: 'cache this answer' }] };
    await client().chat.completions.create(body);
    // The miss's answer is written once the client has it: ask again until the cache answers.
    let spans: CollectedSpan[] = [];
    await eventually(async () => {
      const traceId = hex(16);
      await client(`00-${traceId}-${hex(8)}-01`).chat.completions.create(body);
      spans = await trace(traceId, (s) => s.some((x) => x.kind === SERVER));
      assert.equal(requestSpan(spans).attributes['skybridge.cache.hit'], true);
    }, 10_000);
    const root = requestSpan(spans);
    assert.equal(root.attributes['skybridge.cache.hit_type'], 'direct');
    const lookup = childrenOf(spans, root).find((s) => s.name === 'stage semantic_cache')!;
    assert.equal(lookup.attributes['skybridge.stage.answered'], true);
    assert.equal(childrenOf(spans, root).filter((s) => s.kind === CLIENT).length, 0);
  });

  test('a passthrough call is an attempt span of its request, whose context and the request id reach the provider', async () => {
    const traceId = hex(16);
    const pt = new OpenAI({ baseURL: `${gw.url}/openai_passthrough/v1`, apiKey: VK, maxRetries: 0, defaultHeaders: { traceparent: `00-${traceId}-${hex(8)}-01` } });
    const { response } = await pt.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'passing through' }] }).withResponse();
    const upstream = mock.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!;
    const spans = await trace(traceId, (s) => s.some((x) => x.kind === SERVER) && s.some((x) => x.kind === CLIENT));
    const root = requestSpan(spans);
    assert.equal(root.attributes['skybridge.request.id'], response.headers.get('x-request-id'));
    const attempts = childrenOf(spans, root).filter((s) => s.kind === CLIENT);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].attributes['http.response.status_code'], 200);
    assert.equal(attempts[0].attributes['skybridge.provider'], 'openai');
    assert.equal(upstream.headers.traceparent, `00-${traceId}-${attempts[0].spanId}-01`, 'the span replaced the client traceparent');
    assert.equal(upstream.headers['x-request-id'], response.headers.get('x-request-id'));
  });

  test('agent mode: the tool call and each turn are spans of the agent request, and the MCP server gets the tool span as _meta traceparent', async () => {
    // No virtual key: the MCP client admits callers without one.
    const agentGw = await startGateway({
      providers: mockProviders(mock.url),
      // The turns' usage is summed into the agent request by the logging stage.
      client: { enable_logging: true },
      mcp: { client_configs: [{ name: 'web', connection_type: 'http', connection_string: mcp.httpUrl, tools_to_execute: ['*'], tools_to_auto_execute: ['echo'], allow_without_virtual_key: true }] },
      plugins: [otel('skybridge-agent')],
    });
    try {
      await eventually(async () => assert.deepEqual((await apiClient(agentGw)<{ state: string }[]>('GET', '/api/mcp/clients')).body.map((c) => c.state), ['connected']), 30_000);
      const traceId = hex(16);
      const anonymous = new OpenAI({ baseURL: `${agentGw.url}/v1`, apiKey: 'none', maxRetries: 0, defaultHeaders: { traceparent: `00-${traceId}-${hex(8)}-01` } });
      const answer = await anonymous.chat.completions.create({
        model: 'openai/gpt-4o',
        messages: [{ role: 'user', content: 'weather in Lyon' }],
        tool_choice: { type: 'function', function: { name: 'web-echo' } },
      });
      assert.match(answer.choices[0].message.content ?? '', /echo: weather in Lyon/);
      const spans = await trace(traceId, (s) => s.filter((x) => x.kind === CLIENT).length >= 2 && s.some((x) => x.kind === SERVER) && s.some((x) => x.name.startsWith('execute_tool')), agentGw);
      const root = requestSpan(spans);
      const mcpStage = childrenOf(spans, root).find((s) => s.name === 'stage mcp')!;
      assert.ok(mcpStage, 'an MCP stage span');
      const tool = spans.find((s) => s.name.startsWith('execute_tool'))!;
      assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(tool.attributes['gen_ai.tool.name'], 'echo');
      assert.equal(tool.attributes['skybridge.mcp.client'], 'web');
      assert.equal(tool.parentSpanId, mcpStage.spanId);
      const turns = spans.filter((s) => s.parentSpanId === mcpStage.spanId && s.attributes['skybridge.parent_request_id'] !== undefined);
      assert.equal(turns.length, 2, 'two model turns under the agent request');
      for (const turn of turns) assert.equal(childrenOf(spans, turn).filter((s) => s.kind === CLIENT).length, 1, 'each turn calls the provider once');
      assert.equal(root.attributes['skybridge.agent.turns'], 2);
      const call = mcp.toolCalls.at(-1)!;
      assert.equal(call.meta?.traceparent, `00-${traceId}-${tool.spanId}-01`);
    } finally {
      await agentGw.stop();
    }
  });

  test('no secret reaches the collector: neither the virtual key nor the provider key', async () => {
    await trace(requestSpan(collector.spans()).traceId, () => true);
    const raw = collector.raw();
    assert.ok(raw.length > 0);
    assert.ok(!raw.includes(VK), 'the virtual key');
    assert.ok(!raw.includes('sk-openai-test') && !raw.includes('sk-anthropic-test'), 'the provider keys');
  });
});

describe('configured by the OTel environment variables, exported over gRPC', () => {
  let grpcGw: InProcessGateway;
  after(async () => grpcGw?.stop());

  test('OTEL_EXPORTER_OTLP_ENDPOINT with protocol grpc turns tracing on without a plugin entry; a fresh trace starts without a traceparent; content is captured when asked', async () => {
    grpcGw = await startGateway(
      { providers: mockProviders(mock.url) },
      {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.grpcUrl,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
          OTEL_SERVICE_NAME: 'skybridge-grpc',
          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        },
      },
    );
    const c = new OpenAI({ baseURL: `${grpcGw.url}/v1`, apiKey: 'none', maxRetries: 0 });
    await c.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'over grpc please' }] });
    let root: CollectedSpan | undefined;
    await eventually(async () => {
      await grpcGw.gateway.services.tracing.flush();
      root = collector.spans().find((s) => s.resource['service.name'] === 'skybridge-grpc' && s.kind === SERVER);
      assert.ok(root, 'the request span arrived over gRPC');
    }, 10_000);
    assert.equal(root!.parentSpanId, '');
    // No virtual key and no routing rule: identify and plan had nothing to do and record no span;
    // the request span's only child is the upstream attempt.
    const traceId = root!.traceId;
    let spans: CollectedSpan[] = [];
    await eventually(async () => {
      await grpcGw.gateway.services.tracing.flush();
      spans = collector.spans().filter((s) => s.traceId === traceId);
      assert.ok(spans.some((s) => s.kind === CLIENT), 'the attempt span arrived');
    }, 10_000);
    assert.deepEqual(childrenOf(spans, root!).map((s) => [s.name, s.kind]), [['chat gpt-4o', CLIENT]]);
    assert.match(String(root!.attributes['gen_ai.input.messages']), /over grpc please/);
    assert.match(String(root!.attributes['gen_ai.output.messages']), /Mock reply to: over grpc please/);
  });
});

describe('async jobs and their webhooks', () => {
  test("a job's run continues the submitting client's trace, and its webhook delivery carries that trace context in headers", async () => {
    const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const receiver = await startReceiver();
    receiver.setSecret(SECRET);
    const asyncGw = await startGateway(
      {
        providers: mockProviders(mock.url),
        logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
        // Deliveries to private-network receivers need dashboard authentication configured.
        governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'tracing-async-admin-password' } },
        webhooks: [{ name: 'hook', url: receiver.url, events: ['async_job.completed'], secret: 'env.SKYBRIDGE_TEST_WH_SECRET', allow_private_network: true }],
        plugins: [otel('skybridge-async')],
      },
      { env: { SKYBRIDGE_TEST_WH_SECRET: SECRET } },
    );
    try {
      const traceId = hex(16);
      const parentId = hex(8);
      const res = await fetch(`${asyncGw.url}/v1/async/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-bf-async-webhook': 'hook', traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=job' },
        body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'an async question' }] }),
      });
      assert.equal(res.status, 202);
      const jobId = String(((await res.json()) as { id: string }).id);
      let delivery: (typeof receiver.received)[number] | undefined;
      await eventually(() => {
        delivery = receiver.received.find((r) => r.json.data.job_id === jobId);
        assert.ok(delivery, 'the webhook arrived');
      }, 15_000);
      assert.equal(delivery!.verified, true);
      assert.ok(!delivery!.body.includes('traceparent'), 'the trace context is not in the signed body');
      const spans = await trace(traceId, (s) => s.some((x) => x.name === 'webhook async_job.completed') && s.filter((x) => x.name === 'chat openai/gpt-4o').length >= 2, asyncGw);
      // The submit is the client span's child; the run and the delivery continue under it.
      const submit = spans.find((x) => x.parentSpanId === parentId)!;
      assert.equal(submit.name, 'chat openai/gpt-4o');
      assert.equal(spans.filter((x) => x.parentSpanId === parentId).length, 1, 'one child of the client span: the submit');
      const run = spans.find((x) => x.parentSpanId === submit.spanId && x.name === 'chat openai/gpt-4o')!;
      assert.ok(run, 'the run is a child of the submit');
      assert.equal(run.attributes['gen_ai.provider.name'], 'openai');
      const sent = spans.find((x) => x.name === 'webhook async_job.completed')!;
      assert.equal(sent.parentSpanId, submit.spanId);
      assert.equal(sent.kind, CLIENT);
      assert.equal(sent.attributes['skybridge.webhook.name'], 'hook');
      assert.equal(sent.attributes['skybridge.webhook.attempt'], 1);
      assert.equal(sent.attributes['server.address'], new URL(receiver.url).host);
      assert.equal(sent.attributes['http.response.status_code'], 200);
      // The receiver got the delivery span's context, the client's tracestate kept.
      assert.equal(delivery!.headers.traceparent, `00-${traceId}-${sent.spanId}-01`);
      assert.equal(delivery!.headers.tracestate, 'vendor=job');
      const raw = collector.raw();
      assert.ok(!raw.includes(SECRET) && !raw.includes(String(delivery!.headers['webhook-signature'])), 'neither the secret nor the signature');
      const attempt = childrenOf(spans, run).find((x) => x.kind === CLIENT)!;
      const upstream = mock.requests.filter((r) => r.path.endsWith('/chat/completions') && String(r.headers.traceparent ?? '').includes(traceId));
      assert.deepEqual(upstream.map((r) => r.headers.traceparent), [`00-${traceId}-${attempt.spanId}-01`]);
    } finally {
      await asyncGw.stop();
      await receiver.close();
    }
  });
});
