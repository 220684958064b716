// Management API auth helpers: schemes, constant-time checks, sessions that expire and end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  authenticate, bearerToken, checkAdmin, managementAuth, matchesAny, parseBasic, safeEqual, SessionStore,
} from '../../proxy/src/api/auth.ts';

const auth = managementAuth({ is_enabled: true, admin_username: 'admin', admin_password: 'pa:ss word', api_keys: ['mgmt-key-0123456789ab', 'mgmt-key-ba9876543210'] });
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

test('managementAuth reads auth_config; absent or not enabled is off', () => {
  assert.equal(managementAuth(undefined).enabled, false);
  assert.equal(managementAuth({ admin_username: 'a', admin_password: 'b' }).enabled, false);
  assert.deepEqual(managementAuth({ is_enabled: true }), { enabled: true, apiKeys: [] });
  assert.equal(auth.enabled, true);
});

test('parseBasic and bearerToken read their headers (a password may contain a colon)', () => {
  assert.deepEqual(parseBasic(basic('admin', 'pa:ss word')), { username: 'admin', password: 'pa:ss word' });
  assert.deepEqual(parseBasic(`basic ${Buffer.from('u:').toString('base64')}`), { username: 'u', password: '' });
  assert.equal(parseBasic(`Basic ${Buffer.from('no-colon').toString('base64')}`), undefined);
  assert.equal(parseBasic('Bearer x'), undefined);
  assert.equal(parseBasic(undefined), undefined);
  assert.equal(bearerToken('Bearer  tok '), 'tok');
  assert.equal(bearerToken('bearer tok'), 'tok');
  assert.equal(bearerToken('Bearer '), undefined);
  assert.equal(bearerToken('Basic x'), undefined);
});

test('comparisons: equal strings match, anything else (prefix, longer, empty) does not', () => {
  assert.equal(safeEqual('secret', 'secret'), true);
  assert.equal(safeEqual('secret', 'secre'), false);
  assert.equal(safeEqual('secret', 'secret!'), false);
  assert.equal(safeEqual('', 'secret'), false);
  assert.equal(matchesAny('mgmt-key-ba9876543210', auth.apiKeys), true);
  assert.equal(matchesAny('mgmt-key-0123456789a', auth.apiKeys), false);
  assert.equal(matchesAny('anything', []), false);
  assert.equal(checkAdmin(auth, 'admin', 'pa:ss word'), true);
  assert.equal(checkAdmin(auth, 'admin', 'pa:ss wor'), false);
  assert.equal(checkAdmin(auth, 'Admin', 'pa:ss word'), false);
  assert.equal(checkAdmin(managementAuth({ is_enabled: true }), '', ''), false);
});

const KEY = Buffer.alloc(32, 1);

test('authenticate admits each scheme with the right secret and nothing else', () => {
  const sessions = new SessionStore(() => KEY);
  const { token } = sessions.issue()!;
  assert.equal(authenticate({ authorization: basic('admin', 'pa:ss word') }, auth, sessions), 'basic');
  assert.equal(authenticate({ authorization: basic('admin', 'wrong') }, auth, sessions), undefined);
  assert.equal(authenticate({ authorization: 'Bearer mgmt-key-0123456789ab' }, auth, sessions), 'api_key');
  assert.equal(authenticate({ 'x-api-key': 'mgmt-key-0123456789ab' }, auth, sessions), 'api_key');
  assert.equal(authenticate({ authorization: `Bearer ${token}` }, auth, sessions), 'session');
  // A session token is not a management key for x-api-key.
  assert.equal(authenticate({ 'x-api-key': token }, auth, sessions), undefined);
  assert.equal(authenticate({ authorization: 'Bearer pa:ss word' }, auth, sessions), undefined);
  assert.equal(authenticate({}, auth, sessions), undefined);
  // A failed Authorization header is not rescued by another header.
  assert.equal(authenticate({ authorization: basic('admin', 'wrong'), 'x-api-key': 'mgmt-key-0123456789ab' }, auth, sessions), undefined);
});

test('sessions expire after their TTL, end on revoke, and any store with the same key accepts them (another replica)', () => {
  let key: Buffer | undefined = KEY;
  const sessions = new SessionStore(() => key, 1000);
  const a = sessions.issue(0)!;
  assert.equal(a.expiresAt, 1000);
  assert.equal(sessions.valid(a.token, 999), true);
  assert.equal(sessions.valid(a.token, 1000), false);
  const b = sessions.issue(2000)!;
  assert.notEqual(b.token, a.token);
  const replica = new SessionStore(() => Buffer.from(KEY), 1000);
  assert.equal(replica.valid(b.token, 2001), true, 'same configuration, same key: valid on another replica');
  assert.equal(sessions.revoke(b.token, 2001), true);
  assert.equal(sessions.valid(b.token, 2001), false);
  // A forged or tampered token: the MAC does not match.
  const [exp, nonce, mac] = b.token.split('.');
  assert.equal(replica.valid(`${(2_000_000).toString(36)}.${nonce}.${mac}`, 2001), false, 'expiry moved');
  assert.equal(replica.valid(`${exp}.${nonce}x.${mac}`, 2001), false, 'nonce changed');
  assert.equal(new SessionStore(() => Buffer.alloc(32, 9), 1000).valid(b.token, 2001), false, 'another key');
  // New credentials (a new key) void every session.
  const c = sessions.issue(3000)!;
  key = Buffer.alloc(32, 7);
  assert.equal(sessions.valid(c.token, 3001), false);
  assert.equal(sessions.valid('made-up', 0), false);
  assert.equal(new SessionStore().issue(), undefined, 'no key, no sessions');
});
