// SigV4 for Bedrock: the header the gateway sends is recomputed here independently from the
// SigV4 specification (node:crypto), so a wrong canonical request or key derivation fails.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { deploymentPath, sigV4Headers, signBedrock } from '../../proxy/src/providers/bedrock/sign.ts';
import type { ProviderKey } from '../../proxy/src/providers/runtime.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s).digest();

/** Expected signature per https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html */
function expectedSignature(o: { method: string; canonicalUri: string; host: string; headers: Record<string, string>; signed: string[]; body: string; secret: string; region: string; amzDate: string }): string {
  const all: Record<string, string> = { ...o.headers, host: o.host };
  const canonicalHeaders = o.signed.map((h) => `${h}:${all[h].trim()}\n`).join('');
  const canonical = [o.method, o.canonicalUri, '', canonicalHeaders, o.signed.join(';'), sha(o.body)].join('\n');
  const day = o.amzDate.slice(0, 8);
  const scope = `${day}/${o.region}/bedrock/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', o.amzDate, scope, sha(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${o.secret}`, day), o.region), 'bedrock'), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

const key = (bedrock: ProviderKey['bedrock'], value = ''): ProviderKey => ({ id: 'k', name: 'k', value, models: null, weight: 1, bedrock });

describe('bedrock SigV4', () => {
  test('authorization header verifies against an independent SigV4 computation', async () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    const path = '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse';
    const headers = await sigV4Headers(
      { method: 'POST', origin: 'https://bedrock-runtime.us-west-2.amazonaws.com', path, headers: { 'content-type': 'application/json', accept: 'application/json' }, body },
      { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
      'us-west-2',
      new Date('2025-01-02T03:04:05Z'),
    );
    assert.equal(headers['x-amz-date'], '20250102T030405Z');
    assert.equal(headers.host, undefined);
    const m = /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20250102\/us-west-2\/bedrock\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(headers.authorization);
    assert.ok(m, headers.authorization);
    const signed = m[1].split(';');
    assert.ok(signed.includes('host') && signed.includes('x-amz-date') && signed.includes('content-type'));
    const expected = expectedSignature({
      method: 'POST',
      // Non-S3 services sign the path URI-encoded once more (%3A -> %253A), as the AWS SDK does.
      canonicalUri: '/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse',
      host: 'bedrock-runtime.us-west-2.amazonaws.com',
      headers,
      signed,
      body,
      secret: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      region: 'us-west-2',
      amzDate: '20250102T030405Z',
    });
    assert.equal(m[2], expected);
  });

  test('session token is sent; bearer API key when there is no access key; no credentials is an error', async () => {
    const req = { method: 'POST', origin: 'http://127.0.0.1:9', path: '/model/m/converse', headers: { 'content-type': 'application/json' }, body: '{}' };
    const withToken = await signBedrock(req, key({ access_key: 'AK', secret_key: 'SK', session_token: 'TOKEN', region: 'eu-central-1' }));
    assert.equal(withToken.headers['x-amz-security-token'], 'TOKEN');
    assert.match(withToken.headers.authorization, /Credential=AK\/\d{8}\/eu-central-1\/bedrock\/aws4_request/);
    const bearer = await signBedrock(req, key({ region: 'us-east-1' }, 'bedrock-api-key'));
    assert.equal(bearer.headers.authorization, 'Bearer bedrock-api-key');
    await assert.rejects(signBedrock(req, key({ region: 'us-east-1' })), /neither/);
  });

  test('deployments and arn rewrite the model id in the path', () => {
    const model = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
    const path = `/model/${encodeURIComponent(model)}/converse`;
    assert.equal(deploymentPath(path, key({ region: 'us-east-1' })), path);
    assert.equal(deploymentPath(path, key({ region: 'us-east-1', deployments: { [model]: 'us.anthropic.claude' } })), '/model/us.anthropic.claude/converse');
    const arn = 'arn:aws:bedrock:us-east-1:123:inference-profile';
    assert.equal(
      deploymentPath(path, key({ region: 'us-east-1', arn, deployments: { [model]: 'us.anthropic.claude' } })),
      `/model/${encodeURIComponent(`${arn}/us.anthropic.claude`)}/converse`,
    );
  });
});
