// The checking fetch MCP http/sse clients use (proxy/src/mcp/egress.ts): redirects it follows are
// checked hop by hop, credentials do not follow a redirect to another origin, and resolved
// addresses are checked at connect time.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkedFetch, mcpDispatcher, mcpLookup, refusedMcpAddress } from '../../proxy/src/mcp/egress.ts';

let target: Server;
let hops: Server;
const seen: IncomingHttpHeaders[] = [];
let targetPort = 0;
let hopsUrl = '';
const dispatcher = mcpDispatcher();

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
};

before(async () => {
  target = createServer((req, res) => {
    seen.push(req.headers);
    res.end('landed');
  });
  targetPort = await listen(target);
  hops = createServer((req, res) => {
    if (req.url === '/refused') return void res.writeHead(302, { location: `http://0.0.0.0:${targetPort}/` }).end();
    if (req.url === '/metadata') return void res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    res.writeHead(307, { location: `http://localhost:${targetPort}/elsewhere` }).end();
  });
  hopsUrl = `http://127.0.0.1:${await listen(hops)}`;
});
after(async () => {
  await dispatcher.close();
  for (const s of [target, hops]) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

test('a followed redirect to a refused address fails with the reason and reaches nothing', async () => {
  await assert.rejects(checkedFetch(dispatcher)(`${hopsUrl}/refused`), /refusing to connect to 0\.0\.0\.0:\d+: 0\.0\.0\.0 is an unspecified address/);
  await assert.rejects(checkedFetch(dispatcher)(`${hopsUrl}/metadata`, { method: 'POST', body: '{}' }), /link-local/);
  assert.equal(seen.length, 0);
});

test('a redirect to another origin is followed (name resolved and checked) without the credentials', async () => {
  const res = await checkedFetch(dispatcher, ['X-Api-Key'])(`${hopsUrl}/away`, { method: 'POST', body: '{}', headers: { authorization: 'Bearer s3cret', 'x-api-key': 'k3y', accept: 'application/json' } });
  assert.equal(await res.text(), 'landed');
  const h = seen.at(-1)!;
  assert.equal(h.authorization, undefined);
  assert.equal(h['x-api-key'], undefined);
  assert.equal(h.accept, 'application/json');
});

test('addresses are checked when a name is resolved at connect time', async () => {
  const resolve = (host: string) =>
    new Promise<string>((ok, fail) => mcpLookup(host, {}, (err, address) => (err ? fail(err) : ok(address as string))));
  assert.equal(await resolve('localhost'), '127.0.0.1');
  await assert.rejects(resolve('169.254.169.254'), /refusing to connect to 169\.254\.169\.254: .*link-local/);
  await assert.rejects(resolve('224.0.0.251'), /multicast/);
  assert.equal(refusedMcpAddress('10.1.2.3'), undefined, 'private networks are where MCP servers live');
  assert.equal(refusedMcpAddress('::1'), undefined);
  assert.match(refusedMcpAddress('::') ?? '', /unspecified/);
  assert.match(refusedMcpAddress('ff02::1') ?? '', /multicast/);
  assert.match(refusedMcpAddress('100.100.100.200') ?? '', /metadata/);
});
