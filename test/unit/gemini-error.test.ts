import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fromGeminiError } from '../../proxy/src/providers/gemini/error.ts';

const invalidKey = {
  error: {
    code: 400,
    message: 'API key not valid. Please pass a valid API key.',
    status: 'INVALID_ARGUMENT',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
      { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
    ],
  },
};

const quota = {
  error: {
    code: 429,
    message: 'You exceeded your current quota, please check your plan and billing details.',
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier' }],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '29s' },
    ],
  },
};

describe('fromGeminiError', () => {
  it('reads status as type and the ErrorInfo reason as code', () => {
    assert.deepEqual(fromGeminiError(400, invalidKey), {
      message: 'API key not valid. Please pass a valid API key.',
      type: 'INVALID_ARGUMENT',
      code: 'API_KEY_INVALID',
    });
    assert.deepEqual(fromGeminiError(429, quota), {
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'RESOURCE_EXHAUSTED',
    });
  });

  it('unwraps the array form, also from raw JSON text and bytes', () => {
    const wrapped = [{ error: { code: 404, message: 'models/gemini-9 is not found for API version v1beta', status: 'NOT_FOUND' } }];
    const expected = { message: 'models/gemini-9 is not found for API version v1beta', type: 'NOT_FOUND' };
    assert.deepEqual(fromGeminiError(404, wrapped), expected);
    assert.deepEqual(fromGeminiError(404, JSON.stringify(wrapped)), expected);
    assert.deepEqual(fromGeminiError(404, Buffer.from(JSON.stringify(wrapped))), expected);
  });

  it('names the offending field from a BadRequest violation', () => {
    const body = {
      error: {
        code: 400,
        message: 'Invalid JSON payload received. Unknown name "foo" at \'generation_config\': Cannot find field.',
        status: 'INVALID_ARGUMENT',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [{ field: 'generation_config', description: 'Invalid JSON payload received. Unknown name "foo"' }],
          },
        ],
      },
    };
    assert.deepEqual(fromGeminiError(400, body), {
      message: 'Invalid JSON payload received. Unknown name "foo" at \'generation_config\': Cannot find field.',
      type: 'INVALID_ARGUMENT',
      param: 'generation_config',
    });
  });

  it('copes with bodies that are not Google errors', () => {
    assert.deepEqual(fromGeminiError(503, 'upstream connect error or disconnect/reset before headers'), {
      message: 'upstream connect error or disconnect/reset before headers',
      type: 'UNAVAILABLE',
    });
    assert.deepEqual(fromGeminiError(500, undefined), { message: 'Gemini returned HTTP 500', type: 'INTERNAL' });
    assert.deepEqual(fromGeminiError(418, { unexpected: true }), { message: 'Gemini returned HTTP 418', type: 'UNKNOWN' });
    assert.deepEqual(fromGeminiError(502, '<html>bad gateway</html>'), { message: '<html>bad gateway</html>', type: 'INTERNAL' });
    assert.deepEqual(fromGeminiError(400, { error: { code: 400 } }), { message: 'Gemini returned HTTP 400', type: 'INVALID_ARGUMENT' });
    const long = fromGeminiError(500, 'x'.repeat(2000));
    assert.equal(long.message.length, 501);
  });
});
