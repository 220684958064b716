// docs/compatibility.md claims exactly the cells the integration tests declare with compat() tags,
// found statically (nothing runs here, so this stays fast). Whether those tests pass is the suite's
// own job: a tagged test that fails makes the run red. Plus the tag helper, scanner and renderer.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cellKey, compat, tagsIn } from '../helpers/compat.ts';
import { scanFile, scanIntegrationTests } from '../helpers/compat-scan.ts';
import { cellFileKeys, parseDoc, renderDoc, type CellEntry } from '../helpers/compat-doc.ts';

const root = new URL('../..', import.meta.url).pathname;

describe('docs/compatibility.md', () => {
  test('lists exactly the cells the integration tests declare, each with the files backing it', () => {
    const declared = cellFileKeys(scanIntegrationTests(root));
    const documented = cellFileKeys(parseDoc(readFileSync(join(root, 'docs', 'compatibility.md'), 'utf8')));
    assert.ok(declared.length > 100, `${declared.length} declared cells`);
    const missingFromDoc = declared.filter((k) => !documented.includes(k));
    const withoutTest = documented.filter((k) => !declared.includes(k));
    assert.deepEqual(
      { missingFromDoc, withoutTest },
      { missingFromDoc: [], withoutTest: [] },
      'docs/compatibility.md is out of date with the compat() tags of test/integration: run `npm run docs:compat`',
    );
  });
});

describe('compat tags', () => {
  test('compat() names one cell and tagsIn reads every tag of a name back', () => {
    const name = `streams ${compat('/anthropic', 'messages.stream', 'gemini')} ${compat('/v1', 'embeddings', 'vertex/text-embedding-005')}`;
    assert.equal(name, 'streams [compat /anthropic messages.stream -> gemini] [compat /v1 embeddings -> vertex]');
    assert.deepEqual(tagsIn(name).map(cellKey), ['/anthropic messages.stream -> gemini', '/v1 embeddings -> vertex']);
    assert.deepEqual(tagsIn('no tag here'), []);
  });

  test('an unknown prefix or upstream, or an operation with spaces, throws', () => {
    assert.throws(() => compat('/nope', 'chat', 'openai'), /unknown prefix '\/nope'/);
    assert.throws(() => compat('/v1', 'chat', 'groq'), /names no upstream format/);
    assert.throws(() => compat('/v1', 'chat stream', 'openai'), /must be one word/);
    assert.equal(compat('/openai_passthrough', 'chat', 'openai'), '[compat /openai_passthrough chat -> openai]');
  });
});

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'compat-scan-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('static scan', () => {
  test('finds literal tags and unrolls for-of loops over literal, constant and imported lists', () => {
    const dir = fixture({
      'helpers/lists.ts': "export const FORMATS = ['openai', 'gemini'] as const;\nexport const MODELS = { openai: 'openai/gpt-4o', gemini: 'gemini/gemini-2.5-flash' } as const;\n",
      'integration/a.test.ts': [
        "import { describe, test } from 'node:test';",
        "import { compat } from '../helpers/compat.ts';",
        "import { FORMATS, MODELS } from '../helpers/lists.ts';",
        "const BASES = ['/openai', '/litellm/v1'] as const;",
        "test(`plain ${compat('/anthropic', 'messages.create', 'anthropic')}`, () => {});",
        'for (const format of FORMATS) {',
        "  describe(`d ${compat('/genai', 'generateContent', format)}`, () => {",
        "    for (const base of BASES) test(`t ${compat(base, 'chat', MODELS[format])}`, () => {});",
        '  });',
        '}',
        "for (const { p, u } of [{ p: '/cohere', u: 'cohere' }]) test(compat(p, 'chat', u), () => {});",
        "for (const [p, u] of [['/bedrock', 'bedrock']] as const) test(compat(p, 'Converse', u), () => {});",
      ].join('\n'),
      'integration/untagged.test.ts': "import { test } from 'node:test';\ntest('x', () => {});\n",
    });
    const cells = scanFile(join(dir, 'integration/a.test.ts'), dir);
    assert.deepEqual(cells.map((c) => `${c.file}:${c.line} ${cellKey(c)}`), [
      'integration/a.test.ts:5 /anthropic messages.create -> anthropic',
      'integration/a.test.ts:7 /genai generateContent -> openai',
      'integration/a.test.ts:7 /genai generateContent -> gemini',
      'integration/a.test.ts:8 /openai chat -> openai',
      'integration/a.test.ts:8 /litellm/v1 chat -> openai',
      'integration/a.test.ts:8 /openai chat -> gemini',
      'integration/a.test.ts:8 /litellm/v1 chat -> gemini',
      'integration/a.test.ts:11 /cohere chat -> cohere',
      'integration/a.test.ts:12 /bedrock Converse -> bedrock',
    ]);
    assert.deepEqual(scanFile(join(dir, 'integration/untagged.test.ts'), dir), []);
  });

  test('an argument it cannot evaluate is an error naming the file and line', () => {
    const dir = fixture({
      'integration/bad.test.ts': "import { test } from 'node:test';\nimport { compat } from '../helpers/compat.ts';\nfunction suite(x: string) { test(compat('/v1', 'chat', x), () => {}); }\nsuite('openai');\n",
      'integration/wrong.test.ts': "import { compat } from '../helpers/compat.ts';\ncompat('/v1', 'chat', 'mistral');\n",
    });
    assert.throws(() => scanFile(join(dir, 'integration/bad.test.ts'), dir), /bad\.test\.ts:3: cannot resolve 'x'/);
    assert.throws(() => scanFile(join(dir, 'integration/wrong.test.ts'), dir), /wrong\.test\.ts:2: compat: 'mistral' names no upstream format/);
  });
});

describe('render and parse', () => {
  const entries: CellEntry[] = [
    { prefix: '/anthropic', operation: 'messages.create', upstream: 'gemini', status: 'pass', files: ['test/integration/compat-matrix.test.ts', 'test/integration/native-anthropic.test.ts'] },
    { prefix: '/anthropic', operation: 'messages.stream', upstream: 'bedrock', status: 'fail', files: ['test/integration/compat-matrix.test.ts'] },
    { prefix: '/openai_passthrough', operation: 'chat', upstream: 'openai', status: 'pass', files: ['test/integration/compat-matrix.test.ts'] },
  ];

  test('the document gives back the cells, statuses and files it was rendered from', () => {
    const doc = renderDoc(entries);
    assert.deepEqual(parseDoc(doc), entries);
    assert.match(doc, /\| `messages\.create` \| — \| — \| ✅ \[compat-matrix\] \[native-anthropic\] \| — \|/);
    assert.match(doc, /\| `messages\.stream` \| — \| — \| — \| ❌ \[compat-matrix\] \|/);
    assert.match(doc, /^\[native-anthropic\]: \.\.\/test\/integration\/native-anthropic\.test\.ts$/m);
    // A passthrough table has only its own provider's column.
    assert.match(doc, /## `\/openai_passthrough`\n\n.*\n\n\| operation \| openai \|\n/);
  });
});
