// Export lines: CSV cells quoted where they must be, formulas a spreadsheet would run defused, and
// JSON lines one record each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvCell, csvHeader, csvLine, jsonLine } from '../../proxy/src/logs/export.ts';
import type { LogEntry } from '../../proxy/src/logs/record.ts';

const entry: LogEntry = {
  id: 'r1',
  timestamp: '2026-01-10T12:00:00.000Z',
  created_at: '2026-01-10T12:00:01.000Z',
  object: 'chat.completion',
  provider: 'openai',
  model: 'gpt-4o',
  status: 'error',
  status_code: 429,
  error_class: 'upstream',
  cache_hit: false,
  number_of_retries: 0,
  fallback_index: 0,
  routing_rule_ids: [],
  routing_engines_used: [],
  stream: false,
  virtual_key_name: '=HYPERLINK("http://evil")',
  token_usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  error_details: { status: 429, message: 'slow down, "please"\nnow' },
};

test('cells with commas, quotes or line breaks are quoted, quotes doubled', () => {
  assert.equal(csvCell('plain'), 'plain');
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell('two\nlines'), '"two\nlines"');
  assert.equal(csvCell(undefined), '');
  assert.equal(csvCell(0.25), '0.25');
  assert.equal(csvCell(-3), '-3', 'numbers are not defused');
});

test('text a spreadsheet would run as a formula is prefixed with a quote', () => {
  for (const s of ['=1+1', '+1', '-1', '@SUM(A1)']) assert.equal(csvCell(s)[0] === '"' ? csvCell(s)[1] : csvCell(s)[0], "'", s);
});

test('a record is one CSV line under the header, and one JSON line', () => {
  const header = csvHeader().trimEnd().split(',');
  const line = csvLine(entry);
  assert.ok(line.endsWith('\r\n'));
  const at = (name: string) => header.indexOf(name);
  const cells = line.split(',');
  assert.equal(cells[at('status_code')], '429');
  assert.equal(cells[at('error_class')], 'upstream');
  assert.equal(cells[at('total_tokens')], '7');
  assert.ok(line.includes(`"'=HYPERLINK(""http://evil"")"`), line);
  assert.ok(line.includes('"slow down, ""please""\nnow"'), line);
  assert.deepEqual(JSON.parse(jsonLine(entry)), entry);
  assert.equal(jsonLine(entry).split('\n').length, 2, 'one line and its newline');
});
