// The gateway serving TLS itself (--tls-cert/--tls-key): inference and /health over HTTPS with
// a test CA the clients trust, a renewed certificate picked up from the files without a restart, a
// broken renewal leaving the previous certificate serving, and a bad pair refused at start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { makeTestCa, type TestCa } from '../helpers/test-ca.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { parseCli } from '../../proxy/src/cli.ts';

let mock: MockProvider;
let gw: InProcessGateway;
let ca: TestCa;
let files: { cert: string; key: string };
let firstSerial: string;
let agent: Agent;

before(async () => {
  ca = makeTestCa();
  files = { cert: join(ca.dir, 'server.crt'), key: join(ca.dir, 'server.key') };
  firstSerial = ca.issue('gateway', files).serial;
  agent = new Agent({ connect: { ca: ca.pem } });
  mock = await startMockProvider();
  gw = await startGateway({ providers: mockProviders(mock.url) }, { args: ['--tls-cert', files.cert, '--tls-key', files.key] });
});

after(async () => {
  await gw?.stop();
  await mock?.close();
  await agent?.close();
});

/** Serial numbers as openssl and node print them differ in case and leading zeros. */
const norm = (serial: string): string => serial.toUpperCase().replace(/^0+/, '');

/** The serial number of the certificate the gateway presents now. */
function servedSerial(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: gw.port, ca: ca.pem, servername: 'localhost' }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(norm(serial));
    });
    socket.once('error', reject);
  });
}

describe('TLS listener', () => {
  test('serves HTTPS: /health and a chat completion through the openai SDK trusting only the test CA', async () => {
    assert.match(gw.url, /^https:/);
    const health = await undiciFetch(`${gw.url}/health`, { dispatcher: agent });
    assert.equal(health.status, 200);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'none', maxRetries: 0, fetch: ((url: string, init: object) => undiciFetch(url, { ...init, dispatcher: agent } as never)) as never });
    const answer = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'over tls' }] });
    assert.equal(answer.choices[0].message.content, 'Mock reply to: over tls');
  });

  test('a client that does not trust the CA cannot connect, and the gateway serves on', async () => {
    await assert.rejects(fetch(`${gw.url}/health`), (err: Error) => /certificate|fetch failed/i.test(String((err as { cause?: Error }).cause ?? err.message)));
    assert.equal((await undiciFetch(`${gw.url}/health`, { dispatcher: agent })).status, 200);
  });

  test('plain HTTP on the TLS port gets no answer in clear text', async () => {
    await assert.rejects(fetch(`http://127.0.0.1:${gw.port}/health`));
  });

  test('a renewed certificate written over the files is served without a restart; a broken one keeps the previous serving', async () => {
    assert.equal(await servedSerial(), norm(firstSerial));
    const renewed = ca.issue('gateway', files).serial;
    await eventually(async () => assert.equal(await servedSerial(), norm(renewed)), 5000);
    // A key that is not PEM: the renewed certificate keeps serving, and new connections still work.
    // The reload is tried once the watcher's debounce is over, which a loaded machine can stretch:
    // wait for its failure to be counted, then look at what is served.
    // (The renewal's two writes may have counted a failed reload already: the count must grow.)
    const metrics = async () => (await undiciFetch(`${gw.url}/metrics`, { dispatcher: agent })).text();
    const reloads = async (outcome: string) => Number(new RegExp(`skybridge_tls_reloads_total\\{outcome="${outcome}"\\} (\\d+)`).exec(await metrics())?.[1] ?? 0);
    const failedBefore = await reloads('error');
    writeFileSync(files.key, 'not a key');
    await eventually(async () => assert.ok((await reloads('error')) > failedBefore, 'the broken key was tried'), 5000);
    assert.equal(await servedSerial(), norm(renewed));
    assert.equal((await undiciFetch(`${gw.url}/health`, { dispatcher: agent })).status, 200);
    assert.ok((await reloads('ok')) >= 1, 'the renewal was counted');
  });
});

describe('TLS settings', () => {
  test('--tls-cert without --tls-key (and the reverse) is refused, the environment variables too', () => {
    assert.throws(() => parseCli(['--tls-cert', '/x.crt'], {}), /--tls-cert and --tls-key go together: --tls-cert was given alone/);
    assert.throws(() => parseCli([], { SKYBRIDGE_TLS_KEY: '/x.key' }), /--tls-key was given alone/);
    const opts = parseCli([], { SKYBRIDGE_TLS_CERT: '/a.crt', SKYBRIDGE_TLS_KEY: '/a.key' });
    assert.deepEqual(typeof opts === 'object' && opts.tls, { cert: '/a.crt', key: '/a.key' });
    const plain = parseCli([], {});
    assert.equal(typeof plain === 'object' && plain.tls, undefined);
  });

  test('a key that does not belong to the certificate stops the start with a message naming the files', async () => {
    const other = ca.issue('other');
    await assert.rejects(startGateway({ providers: mockProviders(mock.url) }, { args: ['--tls-cert', files.cert, '--tls-key', other.key] }), (err: Error) => err.message.includes(other.key) && /mismatch|key/i.test(err.message));
    await assert.rejects(startGateway({ providers: mockProviders(mock.url) }, { args: ['--tls-cert', join(ca.dir, 'missing.crt'), '--tls-key', other.key] }), /missing\.crt: ENOENT/);
  });
});
