// Egress checks see through IPv6 forms that lead to an IPv4 address (NAT64, IPv4-compatible and
// -mapped, 6to4, Teredo): the provider, webhook and MCP guards judge the IPv4 address inside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { blockedAddress, blockedHost, embeddedIpv4, guardedLookup, privateAddress, receiverLookup, refusedReceiverHost } from '../../proxy/src/upstream/egress.ts';
import { mcpLookup, refusedMcpAddress } from '../../proxy/src/mcp/egress.ts';

// 169.254.169.254 is a9fe:a9fe; 10.0.0.1 is 0a00:0001; 127.0.0.1 is 7f00:0001; 8.8.8.8 is 0808:0808.
const METADATA_FORMS = [
  '::ffff:169.254.169.254',
  '::ffff:0:a9fe:a9fe',
  '::169.254.169.254',
  '::a9fe:a9fe',
  '64:ff9b::169.254.169.254',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::a9fe:a9fe', // local-use prefix, /96 layout
  '64:ff9b:1:a9fe:a9:fe00::', // local-use prefix, /48 layout (the u octet skipped)
  '64:ff9b:1:a9:fe:a9fe::', // /56 layout
  '64:ff9b:1:0:a9:fea9:fe00:0', // /64 layout
  '2002:a9fe:a9fe::1', // 6to4
  '2001:0:4136:e378:8000:63bf:5601:5601', // Teredo: client 169.254.169.254 stored inverted (5601:5601)
  '[64:ff9b::a9fe:a9fe]',
];

test('the IPv4 address inside each IPv6 form is found', () => {
  assert.deepEqual(embeddedIpv4('64:ff9b::a9fe:a9fe'), ['169.254.169.254']);
  assert.deepEqual(embeddedIpv4('::a00:1'), ['10.0.0.1']);
  assert.deepEqual(embeddedIpv4('2002:808:808::'), ['8.8.8.8']);
  assert.deepEqual(embeddedIpv4('2001:0:4136:e378:8000:63bf:f5ff:fffe'), ['65.54.227.120', '10.0.0.1']);
  assert.ok(embeddedIpv4('64:ff9b:1:a9fe:a9:fe00::').includes('169.254.169.254'));
  // IPv6's own loopback and unspecified address, and ordinary addresses, carry none.
  for (const ip of ['::1', '::', '2606:4700::1111', 'fe80::1', 'fd00::1']) assert.deepEqual(embeddedIpv4(ip), [], ip);
});

test('provider egress refuses every form that leads to a metadata or link-local address', () => {
  for (const ip of METADATA_FORMS) {
    assert.match(blockedAddress(ip) ?? '', /169\.254\.169\.254 is a link-local address/, ip);
    assert.match(refusedMcpAddress(ip) ?? '', /link-local/, ip);
  }
  assert.match(blockedAddress('64:ff9b::6464:64c8') ?? '', /100\.100\.100\.200 is a cloud metadata/);
  assert.match(blockedHost('[2002:a9fe:a9fe::]') ?? '', /link-local/);
  // A public address behind the same forms stays allowed (self-hosted models on NAT64 networks).
  for (const ip of ['64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8', '2001:0:4136:e378:8000:63bf:f7f7:f7f7']) {
    assert.equal(blockedAddress(ip), undefined, ip);
    assert.equal(privateAddress(ip), ip.startsWith('::ffff:') ? `${ip} is an IPv4-mapped address` : undefined, ip);
  }
});

test('webhook egress refuses private, loopback and CGNAT addresses behind NAT64, 6to4, Teredo and IPv4-compatible forms', () => {
  for (const [ip, why] of [
    ['64:ff9b::a00:1', /10\.0\.0\.1 is a private address/],
    ['64:ff9b::7f00:1', /127\.0\.0\.1 is a loopback address/],
    ['::7f00:1', /127\.0\.0\.1 is a loopback address/],
    ['2002:c0a8:101::', /192\.168\.1\.1 is a private address/],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', /127\.0\.0\.1 is a loopback address/],
    ['64:ff9b:1::6440:1', /100\.64\.0\.1 is a shared \(CGNAT\) address/],
  ] as const) {
    assert.match(privateAddress(ip) ?? '', why, ip);
    assert.match(refusedReceiverHost(`[${ip}]`, false) ?? '', why, ip);
    assert.equal(refusedReceiverHost(`[${ip}]`, true), undefined, ip);
  }
  // IPv6's own loopback keeps its own name.
  assert.equal(privateAddress('::1'), '::1 is a loopback address');
});

test('MCP egress refuses unspecified and multicast IPv4 behind NAT64', () => {
  assert.match(refusedMcpAddress('64:ff9b::e000:1') ?? '', /224\.0\.0\.1 is a multicast/);
  assert.match(refusedMcpAddress('::ffff:0.0.0.0') ?? '', /unspecified/);
  // Loopback and private servers stay allowed for MCP.
  assert.equal(refusedMcpAddress('64:ff9b::a00:1'), undefined);
});

test('at connect time, a name resolving to an IPv6 form of the metadata address is refused by every guard', async () => {
  const resolve = (lookup: (h: string, o: object, cb: (err: Error | null, a: string | LookupAddress[]) => void) => void, host: string) =>
    new Promise<string>((ok, fail) => lookup(host, { all: true }, (err, a) => (err ? fail(err) : ok(JSON.stringify(a)))));
  for (const ip of ['64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::', '2001:0:4136:e378:8000:63bf:5601:5601']) {
    await assert.rejects(resolve(guardedLookup(false), ip), /refusing to connect to .*169\.254\.169\.254 is a link-local address/, ip);
    await assert.rejects(resolve(receiverLookup(true), ip), /refusing to connect to .*link-local/, ip);
    await assert.rejects(resolve(mcpLookup, ip), /refusing to connect to .*link-local/, ip);
  }
  // A public NAT64 address still resolves.
  assert.match(await resolve(guardedLookup(false), '64:ff9b::808:808'), /64:ff9b::808:808/);
});

test('a public address behind the local-use NAT64 prefix is not refused for the zero padding of another layout', () => {
  assert.equal(privateAddress('64:ff9b:1::808:808'), undefined);
  assert.equal(refusedMcpAddress('64:ff9b:1::808:808'), undefined);
});
