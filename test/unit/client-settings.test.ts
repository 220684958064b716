// The Settings page's catalog (api/client-settings.ts) against the schema it describes: every client
// setting the gateway reads is listed (a new one added to ClientConfigSchema fails here until the page
// says what it opens), each with a default of its own type, and a stored value and owner shown as set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TObject, TSchema } from '@sinclair/typebox';
import { ClientConfigSchema, UNBUILT_CLIENT_FIELDS } from '../../proxy/src/schema/gateway.ts';
import { clientSettings } from '../../proxy/src/api/client-settings.ts';
import { mergeClient } from '../../proxy/src/api/config.ts';
import { validator } from '../../proxy/src/schema/validate.ts';

/** Deprecated aliases the page leaves out (their successor is listed). */
const NOT_LISTED = new Set(['enforce_governance_header']);

/** Every leaf setting of the schema by dotted path (objects' members, not the objects). */
function leaves(schema: TSchema, prefix = ''): string[] {
  return Object.entries((schema as TObject).properties).flatMap(([k, s]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    return s.type === 'object' ? leaves(s, path) : [path];
  });
}

test('every built client setting is on the page, and nothing else', () => {
  const built = leaves(ClientConfigSchema).filter((p) => !UNBUILT_CLIENT_FIELDS.includes(p.split('.')[0]!) && !NOT_LISTED.has(p));
  const listed = clientSettings(undefined, () => undefined).map((s) => s.name);
  assert.deepEqual([...listed].sort(), [...built].sort());
});

test('each default is a valid value of its setting, and says what it opens', () => {
  const check = validator(ClientConfigSchema);
  for (const s of clientSettings(undefined, () => undefined)) {
    const doc: Record<string, unknown> = {};
    let node = doc;
    const segs = s.name.split('.');
    for (const seg of segs.slice(0, -1)) node = (node[seg] = {}) as Record<string, unknown>;
    node[segs.at(-1)!] = s.default;
    assert.ok(!Array.isArray(check(doc)), `${s.name}: default ${JSON.stringify(s.default)} is valid`);
    assert.ok(s.effect.length > 20, `${s.name} says what it opens or costs`);
    assert.equal(s.owner, 'default');
    assert.equal(s.value, undefined);
  }
});

test('a stored value and its owner are shown; a nested setting takes the owner of its section', () => {
  const settings = clientSettings({ max_request_body_size_mb: 3, async_job_config: { max_attempts: 5 } }, (field) => (field === 'async_job_config' ? { owner: 'file', source: '/etc/skybridge/config.json' } : { owner: 'store' }));
  const body = settings.find((s) => s.name === 'max_request_body_size_mb')!;
  assert.deepEqual([body.value, body.owner, body.type, body.minimum], [3, 'store', 'integer', 1]);
  const attempts = settings.find((s) => s.name === 'async_job_config.max_attempts')!;
  assert.deepEqual([attempts.value, attempts.owner, attempts.source], [5, 'file', '/etc/skybridge/config.json']);
  // Unset members of a set section are the default's value, still owned by the section's owner.
  assert.equal(settings.find((s) => s.name === 'async_job_config.lease_seconds')!.value, undefined);
  assert.deepEqual(settings.find((s) => s.name === 'mcp_code_mode_binding_level')!.options, ['server', 'tool']);
});

test('the merge of PUT /api/config: nested members merge, null removes, arrays replace', () => {
  const stored = { allowed_origins: ['https://a.example'], async_job_config: { max_attempts: 5, lease_seconds: 9 }, enable_logging: false };
  assert.deepEqual(mergeClient(stored, { async_job_config: { max_attempts: null, poll_interval_ms: 200 }, enable_logging: null, allowed_origins: ['https://b.example'] }), {
    allowed_origins: ['https://b.example'],
    async_job_config: { lease_seconds: 9, poll_interval_ms: 200 },
  });
  // A nested object sent where nothing was stored arrives without its nulls.
  assert.deepEqual(mergeClient({}, { compat: { convert_text_to_chat: true, other: null } }), { compat: { convert_text_to_chat: true } });
  assert.deepEqual(stored.async_job_config, { max_attempts: 5, lease_seconds: 9 }, 'the stored section is not changed in place');
});
