// WebRTC calls per replica: N calls, each a real WebRTC peer here (node-datachannel on loopback)
// sending one 20 ms Opus packet every 20 ms (50 a second, as a microphone does), answered by the
// mock provider's peer, which sends each packet straight back (`instructions: "echo audio"`).
// First straight to the mock's /v1/realtime/calls, then through the gateway (its two peers per call
// relay the RTP both ways). Each packet carries its send time, so its round trip is read when it
// comes back: the difference between the phases is what the gateway's relay adds per packet (both
// hops). Also: the gateway's CPU per 1,000 RTP packets it relayed, its cores busy and RSS at N
// calls (so calls per core), packets lost, and how long a call took to set up. The mock and the
// gateway are child processes (`node proxy/src/main.ts`); the peers run here.
//
//   node bench/realtime-webrtc.ts --calls 25,50,100 --seconds 15
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, ROOT, rssMb } from './lib/procs.ts';
import { summarize } from './lib/stats.ts';
import { ClientPeer, closeAllPeers } from '../test/helpers/webrtc-client.ts';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '25,50,100' }, seconds: { type: 'string', default: '15' } }, strict: true });
const LEVELS = values.calls.split(',').map(Number);
const SECONDS = Number(values.seconds);
const FRAME_MS = 20;
const WARMUP_MS = 1000;

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

async function start(args: string[], port: number, ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}${ready}`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${args[0]} did not start`);
}

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

interface Phase {
  calls: number;
  failed: number;
  setupMs: number[];
  rtt: number[];
  sent: number;
  received: number;
  gatewayCpu: number;
  mockCpu: number;
  peakRss: number;
}

/** One call to `url`: the peer, once its events channel is open. */
async function open(url: string, headers: Record<string, string>, model: string): Promise<ClientPeer> {
  const peer = new ClientPeer();
  const form = new FormData();
  form.set('sdp', await peer.offer());
  form.set('session', JSON.stringify({ type: 'realtime', model, instructions: 'echo audio' }));
  const res = await fetch(url, { method: 'POST', headers, body: form });
  if (res.status !== 201) throw new Error(`${res.status} ${await res.text()}`);
  peer.accept(await res.text());
  await Promise.race([peer.opened, new Promise((_, reject) => setTimeout(() => reject(new Error('the call did not open in 10 s')), 10_000))]);
  return peer;
}

async function run(n: number, url: string, headers: Record<string, string>, model: string, mockPid: number, gatewayPid?: number): Promise<Phase> {
  const phase: Phase = { calls: n, failed: 0, setupMs: [], rtt: [], sent: 0, received: 0, gatewayCpu: 0, mockCpu: 0, peakRss: 0 };
  const peers: ClientPeer[] = [];
  // Set up ten at a time, as calls arriving over a few seconds.
  for (let i = 0; i < n; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, async () => {
        const t0 = performance.now();
        try {
          const peer = await open(url, headers, model);
          phase.setupMs.push(performance.now() - t0);
          return peer;
        } catch (err) {
          phase.failed++;
          process.stderr.write(`call failed: ${(err as Error).message.slice(0, 200)}\n`);
          return undefined;
        }
      }),
    );
    for (const p of batch) if (p) peers.push(p);
  }
  let measuring = false;
  for (const peer of peers) {
    peer.onRtp = (packet) => {
      // The payload after the Opus TOC byte is the send time (a double), as the mock sent it back.
      if (!measuring || packet.length < 21) return;
      phase.received++;
      phase.rtt.push(performance.now() - packet.readDoubleLE(13));
    };
  }
  const payload = Buffer.alloc(9);
  payload[0] = 0xf8;
  const tick = setInterval(() => {
    for (const peer of peers) {
      payload.writeDoubleLE(performance.now(), 1);
      peer.sendAudio(1, payload);
      if (measuring) phase.sent++;
    }
  }, FRAME_MS);
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  const cpu0 = { mock: cpuSeconds(mockPid), gateway: gatewayPid ? cpuSeconds(gatewayPid) : 0 };
  measuring = true;
  const sampler = gatewayPid ? setInterval(() => (phase.peakRss = Math.max(phase.peakRss, rssMb(gatewayPid))), 1000) : undefined;
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  measuring = false;
  phase.mockCpu = cpuSeconds(mockPid) - cpu0.mock;
  if (gatewayPid) phase.gatewayCpu = cpuSeconds(gatewayPid) - cpu0.gateway;
  clearInterval(tick);
  if (sampler) clearInterval(sampler);
  // Echoes still in flight are not counted as lost.
  await new Promise((r) => setTimeout(r, 500));
  for (const p of peers) p.close();
  await new Promise((r) => setTimeout(r, 2000));
  return phase;
}

const mockPort = await freePort();
const gwPort = await freePort();
const mock = await start([join(ROOT, 'test/mock-provider/main.ts'), '--port', String(mockPort), '--max-recorded', '1'], mockPort, '/_mock/health');
const appDir = mkdtempSync(join(tmpdir(), 'skybridge-bench-rtc-'));
writeFileSync(
  join(appDir, 'config.json'),
  JSON.stringify({
    providers: { openai: { keys: [{ name: 'k', value: 'sk-bench', weight: 1 }], network_config: { base_url: `http://127.0.0.1:${mockPort}/openai` } } },
    websocket: { max_connections_per_user: 10_000, webrtc: { bind_address: '127.0.0.1' } },
    client: { enable_logging: false },
  }),
);
const gateway = await start([join(ROOT, 'proxy/src/main.ts'), '--app-dir', appDir, '--port', String(gwPort), '--host', '127.0.0.1', '--log-level', 'warn'], gwPort, '/health');
const idleRss = rssMb(gateway.pid!);

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const lines = [`WebRTC calls, ${SECONDS} s measured per level, one 20 ms Opus packet every 20 ms per call each way, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`, '', '| calls | direct RTT p50 / p99 (ms) | through the gateway p50 / p99 (ms) | added p50 / p99 (ms) | lost direct / gateway | gateway CPU per 1,000 packets relayed (ms) | gateway cores busy | gateway RSS idle / peak (MB) | setup p50 / p99 (ms), gateway | failed |', '|---:|---|---|---|---|---:|---:|---|---|---:|'];
for (const n of LEVELS) {
  const direct = await run(n, `http://127.0.0.1:${mockPort}/openai/v1/realtime/calls`, { authorization: 'Bearer sk-bench' }, 'gpt-realtime', mock.pid!);
  const relayed = await run(n, `http://127.0.0.1:${gwPort}/v1/realtime/calls`, {}, 'openai/gpt-realtime', mock.pid!, gateway.pid!);
  const d = summarize(direct.rtt);
  const g = summarize(relayed.rtt);
  const s = summarize(relayed.setupMs);
  // Each packet crosses the gateway twice: out to the provider, and its echo back.
  const relayedPackets = relayed.sent + relayed.received;
  const lost = (p: Phase) => `${f((100 * Math.max(0, p.sent - p.received)) / Math.max(1, p.sent), 1)} %`;
  lines.push(
    `| ${n} | ${f(d.p50)} / ${f(d.p99)} | ${f(g.p50)} / ${f(g.p99)} | ${f(g.p50 - d.p50)} / ${f(g.p99 - d.p99)} | ${lost(direct)} / ${lost(relayed)} | ${f((relayed.gatewayCpu * 1000) / (relayedPackets / 1000), 1)} | ${f(relayed.gatewayCpu / SECONDS)} | ${f(idleRss, 0)} / ${f(relayed.peakRss, 0)} | ${f(s.p50, 0)} / ${f(s.p99, 0)} | ${direct.failed} / ${relayed.failed} |`,
  );
  process.stderr.write(`${lines.at(-1)}\n`);
}
closeAllPeers();
process.stdout.write(lines.join('\n') + '\n');
for (const c of children) c.kill('SIGTERM');
process.exit(0);
