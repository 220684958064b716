// The conversion webhook's pure parts: a ConversionReview in, the answer out (every object converted,
// or a failure naming the object and the field), and the CRDs' conversion settings it keeps.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCrds } from '../../operator/src/crds/crd.ts';
import { BadReview, review } from '../../operator/src/conversion/review.ts';
import { conversionConfig, conversionMatches } from '../../operator/src/conversion/crd-config.ts';
import type { KindName } from '../../operator/src/resources/kinds.ts';

const generated = buildCrds();
const objectOf = (kind: KindName, version: string, spec: unknown) => ({ apiVersion: `gateway.skybridge.dev/${version}`, kind, metadata: { name: 'sample', namespace: 'team-a' }, spec });

describe('ConversionReview', () => {
  const request = (desiredAPIVersion: string, objects: unknown[]) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u-1', desiredAPIVersion, objects } });

  test('converts every object to the desired version and answers with the uid', () => {
    const a = objectOf('RoutingRule', 'v1alpha1', { scope: 'team', scope_id: 'ml', targets: [{ provider: 'openai', key_id: 'k', weight: 1 }], cel_expression: "model == 'a_b'" });
    const b = objectOf('Webhook', 'v1beta1', { url: 'https://x', allowPrivateNetwork: false });
    const answer = review(request('gateway.skybridge.dev/v1beta1', [a, b]));
    assert.equal(answer.response.uid, 'u-1');
    assert.deepEqual(answer.response.result, { status: 'Success' });
    assert.deepEqual((answer.response.convertedObjects as { spec: unknown }[]).map((o) => o.spec), [
      { scope: 'team', scopeID: 'ml', targets: [{ provider: 'openai', keyID: 'k', weight: 1 }], celExpression: "model == 'a_b'" },
      { url: 'https://x', allowPrivateNetwork: false },
    ]);
    assert.deepEqual((answer.response.convertedObjects as { apiVersion: string }[]).map((o) => o.apiVersion), ['gateway.skybridge.dev/v1beta1', 'gateway.skybridge.dev/v1beta1']);
  });

  test('one bad object fails the review with a message naming the object and the field', () => {
    const bad = objectOf('VirtualKey', 'v1beta1', { rateLimit: { token_max_limit: 5 } });
    const answer = review(request('gateway.skybridge.dev/v1alpha1', [objectOf('VirtualKey', 'v1beta1', {}), bad]));
    assert.equal(answer.response.result.status, 'Failure');
    assert.equal(answer.response.convertedObjects, undefined);
    assert.equal(
      (answer.response.result as { message: string }).message,
      'cannot convert VirtualKey team-a/sample (gateway.skybridge.dev/v1beta1) to gateway.skybridge.dev/v1alpha1: spec.rateLimit.token_max_limit: unknown field (v1beta1 has no such field here)',
    );
    const wrong = review(request('gateway.skybridge.dev/v2', []));
    assert.match((wrong.response.result as { message: string }).message, /^request\.desiredAPIVersion: must be gateway\.skybridge\.dev\/v1alpha1 or gateway\.skybridge\.dev\/v1beta1/);
    const kindless = review(request('gateway.skybridge.dev/v1beta1', [{ apiVersion: 'gateway.skybridge.dev/v1alpha1', kind: 'Pod', metadata: { name: 'p' } }]));
    assert.match((kindless.response.result as { message: string }).message, /Pod p .*: kind: must be one of Provider, /);
  });

  test('a body that is no ConversionReview is a BadReview (the server answers 400)', () => {
    assert.throws(() => review([]), BadReview);
    assert.throws(() => review({ apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview', request: { uid: 'x' } }), BadReview);
    assert.throws(() => review({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: {} }), /request\.uid: required/);
  });
});

describe('the CRDs point at the webhook', () => {
  test('service or URL with the CA; a CRD already pointed there needs no patch', () => {
    const svc = conversionConfig({ service: { namespace: 'gw', name: 'sb-operator-conversion', port: 443 } }, 'PEM');
    assert.deepEqual(svc, { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { caBundle: Buffer.from('PEM').toString('base64'), service: { namespace: 'gw', name: 'sb-operator-conversion', port: 443, path: '/convert' } } } });
    assert.ok(conversionMatches(JSON.parse(JSON.stringify(svc)), svc));
    const placeholder = (generated[0].crd as { spec: { conversion: unknown } }).spec.conversion;
    assert.ok(!conversionMatches(placeholder, svc), 'the placeholder in crds/ is not the release');
    const url = conversionConfig({ url: 'https://127.0.0.1:9443/convert' }, 'PEM');
    assert.ok(!conversionMatches(svc, url));
    assert.ok(!conversionMatches({ ...url, webhook: { ...url.webhook, clientConfig: { ...url.webhook.clientConfig, caBundle: 'b2xk' } } }, url), 'a new CA is written');
  });
});

