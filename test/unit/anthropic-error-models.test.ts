import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromAnthropicError, statusForAnthropicErrorType } from '../../proxy/src/providers/anthropic/error.ts';
import { fromAnthropicModels } from '../../proxy/src/providers/anthropic/models.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

test('error body: object and JSON-string forms', () => {
  const body = {
    type: 'error',
    error: { type: 'not_found_error', message: 'The requested resource could not be found.' },
    request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy',
  };
  const expected = { type: 'not_found_error', message: 'The requested resource could not be found.' };
  assert.deepEqual(fromAnthropicError(404, body), expected);
  assert.deepEqual(fromAnthropicError(404, JSON.stringify(body)), expected);
});

test('error body: non-JSON and unexpected bodies fall back to the status', () => {
  assert.deepEqual(fromAnthropicError(502, '<html>Bad Gateway</html>'), { type: 'api_error', message: '<html>Bad Gateway</html>' });
  assert.deepEqual(fromAnthropicError(529, ''), { type: 'overloaded_error', message: 'anthropic returned HTTP 529' });
  assert.deepEqual(fromAnthropicError(429, { message: 'nope' }), { type: 'rate_limit_error', message: 'anthropic returned HTTP 429' });
  assert.deepEqual(fromAnthropicError(400, null), { type: 'invalid_request_error', message: 'anthropic returned HTTP 400' });
  assert.deepEqual(fromAnthropicError(418, [1, 2]), { type: 'invalid_request_error', message: 'anthropic returned HTTP 418' });
  assert.equal(fromAnthropicError(500, 'x'.repeat(2000)).message.length, 500);
});

test('error types map to their documented statuses', () => {
  assert.equal(statusForAnthropicErrorType('overloaded_error'), 529);
  assert.equal(statusForAnthropicErrorType('rate_limit_error'), 429);
  assert.equal(statusForAnthropicErrorType('request_too_large'), 413);
  assert.equal(statusForAnthropicErrorType('timeout_error'), 504);
  assert.equal(statusForAnthropicErrorType('mystery_error'), 500);
});

test('models page: fields, created as unix seconds, cursor when has_more', () => {
  const page = fromAnthropicModels({
    data: [
      {
        type: 'model',
        id: 'claude-sonnet-4-5-20250929',
        display_name: 'Claude Sonnet 4.5',
        created_at: '2025-09-29T00:00:00Z',
        max_input_tokens: 200000,
        max_tokens: 64000,
      },
      { type: 'model', id: 'claude-3-haiku-20240307', display_name: 'Claude Haiku 3', created_at: '2024-03-07T00:00:00Z' },
      { type: 'model', display_name: 'no id, skipped' },
    ],
    has_more: true,
    first_id: 'claude-sonnet-4-5-20250929',
    last_id: 'claude-3-haiku-20240307',
  });
  assert.deepEqual(page, {
    models: [
      {
        id: 'claude-sonnet-4-5-20250929',
        name: 'Claude Sonnet 4.5',
        created: 1759104000,
        context_length: 200000,
        max_input_tokens: 200000,
        max_output_tokens: 64000,
      },
      { id: 'claude-3-haiku-20240307', name: 'Claude Haiku 3', created: 1709769600 },
    ],
    nextPageToken: 'claude-3-haiku-20240307',
  });
});

test('models page: last page has no cursor; malformed bodies throw', () => {
  const page = fromAnthropicModels({ data: [], has_more: false, first_id: null, last_id: null });
  assert.deepEqual(page, { models: [] });
  assert.deepEqual(fromAnthropicModels({ data: [{ type: 'model', id: 'a', display_name: 'A', created_at: 'a' }], has_more: false, last_id: 'a' }), {
    models: [{ id: 'a', name: 'A' }],
  });
  assert.throws(() => fromAnthropicModels('oops'), (e: unknown) => e instanceof GatewayError && e.status === 502);
  assert.throws(() => fromAnthropicModels({ models: [] }), (e: unknown) => e instanceof GatewayError && e.upstream);
});
