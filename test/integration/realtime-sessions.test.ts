// GET /api/realtime/sessions and the dashboard socket's `realtime` events, with a real session of the
// official openai SDK's OpenAIRealtimeWS (wss:, trusting a test CA) through the gateway to the mock's
// OpenAI realtime endpoint: the open session with its key, team, model and provider, its turns,
// tokens and cost as each turn is charged, and once closed, in the ended list with the id of its
// request log record. A Responses API WebSocket connection of the SDK's ResponsesWS is listed alike
// (transport responses_ws, a turn per response answered, linking its latest response's record).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { fetch as undiciFetch, type Agent } from 'undici';
import type { InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import type { TestCa } from '../helpers/test-ca.ts';
import { startTlsGateway, type TlsGateway } from '../helpers/tls-gateway.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import type { RealtimeSessionsAnswer, RealtimeSessionView } from '../../proxy/src/api/answers.ts';

const VK = 'sk-bf-rt-sessions-0123456789';
const RESPONSES_VK = 'sk-bf-rt-responses-ws-01234';
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];

let mock: MockProvider;
let gw: InProcessGateway;
let tls: TlsGateway;
let ca: TestCa;
let agent: Agent;

before(async () => {
  mock = await startMockProvider();
  tls = await startTlsGateway({
    providers: mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN } }),
    governance: {
      teams: [
        { id: 'voice-team', name: 'Voice' },
        { id: 'agents-team', name: 'Agents' },
      ],
      virtual_keys: [
        { id: 'rt-vk', name: 'rt-vk', value: VK, team_id: 'voice-team', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-realtime'], key_ids: ['*'], weight: 1 }] },
        { id: 'resp-vk', name: 'resp-vk', value: RESPONSES_VK, team_id: 'agents-team', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] },
      ],
    },
    client: { enforce_auth_on_inference: true },
  });
  ({ gw, ca, agent } = tls);
});

after(async () => {
  await tls?.stop();
  await mock?.close();
});

async function sessions(): Promise<RealtimeSessionsAnswer> {
  const res = await undiciFetch(`${gw.url}/api/realtime/sessions`, { dispatcher: agent });
  assert.equal(res.status, 200);
  return (await res.json()) as RealtimeSessionsAnswer;
}

interface RealtimeEvent {
  type: 'realtime';
  event: 'opened' | 'turn' | 'ended';
  data: RealtimeSessionView;
}

/** The dashboard's socket (auth off, loopback: no ticket needed), and the realtime events it told. */
async function dashboardSocket(): Promise<{ live: WebSocket; events: RealtimeEvent[] }> {
  const live = new WebSocket(`${gw.url.replace(/^https/, 'wss')}/ws`, { ca: ca.pem });
  const events: RealtimeEvent[] = [];
  live.on('message', (data) => {
    const msg = JSON.parse((data as Buffer).toString()) as { type: string };
    if (msg.type === 'realtime') events.push(msg as RealtimeEvent);
  });
  await new Promise((resolve, reject) => (live.once('open', resolve), live.once('error', reject)));
  return { live, events };
}

describe('realtime sessions for the dashboard', () => {
  test('an SDK session is listed while open, counts its turns, tokens and cost, and ends linked to its log record', { timeout: 60_000 }, async () => {
    const { live, events } = await dashboardSocket();
    try {
      const rt = tls.realtime(VK, 'openai/gpt-realtime');
      const seen: string[] = [];
      let usage: { input_tokens: number; output_tokens: number } | undefined;
      rt.on('event', (e) => {
        seen.push(e.type);
        if (e.type === 'response.done') usage = (e as unknown as { response: { usage: typeof usage } }).response.usage;
      });
      rt.on('error', () => undefined);
      const closed = new Promise<number>((resolve) => rt.socket.once('close', (code: number) => resolve(code)));
      await new Promise((resolve, reject) => (rt.socket.once('open', resolve), rt.socket.once('error', reject)));
      await eventually(() => assert.ok(seen.includes('session.created')));

      const open = (await sessions()).open;
      assert.equal(open.length, 1);
      const s = open[0]!;
      assert.deepEqual(
        { state: s.state, virtual_key_id: s.virtual_key_id, virtual_key_name: s.virtual_key_name, team_id: s.team_id, model: s.model, provider: s.provider, transport: s.transport, turns: s.turns },
        { state: 'open', virtual_key_id: 'rt-vk', virtual_key_name: 'rt-vk', team_id: 'voice-team', model: 'gpt-realtime', provider: 'openai', transport: 'websocket', turns: 0 },
      );
      assert.ok(Date.now() - Date.parse(s.started_at) < 60_000);
      assert.ok(!JSON.stringify(open).includes(VK), 'the key value is never shown');

      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello sessions' }] } });
      rt.send({ type: 'response.create' });
      await eventually(async () => assert.equal((await sessions()).open[0]?.turns, 1));
      const after1 = (await sessions()).open[0]!;
      // The turn's usage as the client got it, at a cent per token.
      await eventually(() => assert.ok(usage));
      const tokens = usage!.input_tokens + usage!.output_tokens;
      assert.ok(tokens > 0);
      assert.equal(after1.total_tokens, tokens);
      assert.ok(Math.abs(after1.cost - tokens * 0.01) < 1e-9, `cost ${after1.cost}`);

      rt.close();
      assert.equal(await closed, 1000);
      await eventually(async () => assert.equal((await sessions()).open.length, 0));
      const ended = (await sessions()).ended[0]!;
      assert.equal(ended.id, s.id);
      assert.equal(ended.state, 'ended');
      assert.equal(ended.end_reason, 'client');
      assert.equal(ended.turns, 1);
      assert.equal(ended.log_id, s.id);
      // The log record it links to is the session's own (request logging is on by default).
      await eventually(async () => {
        const res = await undiciFetch(`${gw.url}/api/logs/${ended.log_id}`, { dispatcher: agent });
        assert.equal(res.status, 200);
        const record = (await res.json()) as { object: string; metadata?: Record<string, string> };
        assert.equal(record.object, 'realtime');
        assert.equal(record.metadata?.realtime_turns, '1');
      });
      // The socket told the dashboard each step, as it happened.
      await eventually(() => assert.deepEqual(events.filter((e) => e.data.id === s.id).map((e) => e.event), ['opened', 'turn', 'ended']));
      assert.equal(events.at(-1)!.data.total_tokens, tokens);
    } finally {
      live.close();
    }
  });

  test('a Responses WebSocket connection is listed while open, counts each response, and ends linked to its latest record', { timeout: 60_000 }, async () => {
    const { live, events } = await dashboardSocket();
    try {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: RESPONSES_VK, maxRetries: 0 });
      const rws = new ResponsesWS(client, { ca: ca.pem });
      const completed: { usage?: { total_tokens: number } }[] = [];
      rws.on('event', (e) => {
        if (e.type === 'response.completed') completed.push((e as unknown as { response: (typeof completed)[number] }).response);
      });
      rws.on('error', () => undefined);
      const socket = rws.socket.platformSocket;
      const closed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
      await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));

      const listed = async () => (await sessions()).open.filter((v) => v.transport === 'responses_ws');
      await eventually(async () => assert.equal((await listed()).length, 1));
      const s = (await listed())[0]!;
      assert.deepEqual(
        { state: s.state, virtual_key_id: s.virtual_key_id, virtual_key_name: s.virtual_key_name, team_id: s.team_id, model: s.model, turns: s.turns, total_tokens: s.total_tokens, log_id: s.log_id },
        { state: 'open', virtual_key_id: 'resp-vk', virtual_key_name: 'resp-vk', team_id: 'agents-team', model: '', turns: 0, total_tokens: 0, log_id: undefined },
      );

      for (const [n, input] of ['first over the socket', 'second over the socket'].entries()) {
        rws.send({ type: 'response.create', model: 'openai/gpt-4o', input });
        await eventually(() => assert.equal(completed.length, n + 1));
        await eventually(async () => assert.equal((await listed())[0]?.turns, n + 1));
      }
      const tokens = completed.reduce((sum, r) => sum + (r.usage?.total_tokens ?? 0), 0);
      assert.ok(tokens > 0);
      const open = (await listed())[0]!;
      assert.deepEqual({ model: open.model, provider: open.provider, total_tokens: open.total_tokens }, { model: 'gpt-4o', provider: 'openai', total_tokens: tokens });
      assert.ok(Math.abs(open.cost - tokens * 0.01) < 1e-9, `cost ${open.cost}`);
      assert.ok(open.log_id && open.log_id !== s.id, 'it links its latest response, not a record of its own');

      rws.close();
      assert.equal(await closed, 1000);
      await eventually(async () => assert.equal((await listed()).length, 0));
      const ended = (await sessions()).ended.find((v) => v.id === s.id);
      assert.ok(ended, 'in recently ended');
      assert.deepEqual({ state: ended.state, transport: ended.transport, end_reason: ended.end_reason, turns: ended.turns, total_tokens: ended.total_tokens }, { state: 'ended', transport: 'responses_ws', end_reason: 'client', turns: 2, total_tokens: tokens });
      // The link opens the second response's own record.
      await eventually(async () => {
        const res = await undiciFetch(`${gw.url}/api/logs/${ended.log_id}`, { dispatcher: agent });
        assert.equal(res.status, 200);
        const record = (await res.json()) as { virtual_key_id?: string; model?: string; token_usage?: { total_tokens: number } };
        assert.deepEqual({ vk: record.virtual_key_id, model: record.model }, { vk: 'resp-vk', model: 'gpt-4o' });
        assert.equal(record.token_usage?.total_tokens, completed[1]!.usage?.total_tokens);
      });
      await eventually(() => assert.deepEqual(events.filter((e) => e.data.id === s.id).map((e) => e.event), ['opened', 'turn', 'turn', 'ended']));
    } finally {
      live.close();
    }
  });

  test('the route reads only', async () => {
    const res = await undiciFetch(`${gw.url}/api/realtime/sessions`, { dispatcher: agent, method: 'DELETE' });
    assert.equal(res.status, 405);
  });
});
