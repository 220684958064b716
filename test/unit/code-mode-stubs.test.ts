// The code-mode meta-tools other than execution: the OpenAI tool definitions, the virtual .pyi files
// generated from the MCP input schemas, per-tool docs, and the errors a model sees on bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeModeTools, runCodeModeTool, type CodeModeRunOptions, type ToolHost } from '../../proxy/src/mcp/code-mode/index.ts';
import { identifier, pyType } from '../../proxy/src/mcp/code-mode/stubs.ts';

const host: ToolHost = {
  servers: () => [
    {
      name: 'web-search',
      tools: [
        {
          name: 'search',
          description: 'Search the web.\nReturns at most `limit` hits.',
          inputSchema: {
            type: 'object',
            properties: {
              query: { type: 'string', description: 'What to look for.' },
              limit: { type: 'integer', default: 5 },
              lang: { type: 'string', enum: ['en', 'de'] },
              tags: { type: 'array', items: { type: 'string' } },
            },
            required: ['query'],
          },
        },
        { name: 'ping', inputSchema: { type: 'object' } },
      ],
    },
    { name: 'db', tools: [{ name: 'run-sql', description: 'Run SQL.', inputSchema: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'] } }] },
  ],
  call: async () => ({}),
};

const opts = (bindingLevel: 'server' | 'tool'): CodeModeRunOptions => ({
  bindingLevel,
  unattended: false,
  autoExecute: () => true,
  allowed: () => true,
  timeoutMs: 5000,
  log: () => {},
});

test('four OpenAI function tools; executeToolCode names the server globals', () => {
  const tools = codeModeTools(host, 'server');
  assert.deepEqual(
    tools.map((t) => t.function.name),
    ['listToolFiles', 'readToolFile', 'getToolDocs', 'executeToolCode'],
  );
  assert.ok(tools.every((t) => t.type === 'function'));
  const read = tools[1].function.parameters as { required: string[]; properties: Record<string, { type: string }> };
  assert.deepEqual(read.required, ['fileName']);
  assert.equal(read.properties.startLine.type, 'integer');
  assert.match(tools[3].function.description, /db, web_search/);
});

test('listToolFiles at server and at tool binding level', async () => {
  assert.equal((await runCodeModeTool('listToolFiles', {}, host, opts('server'))).content, 'servers/db.pyi\nservers/web-search.pyi');
  assert.equal(
    (await runCodeModeTool('listToolFiles', {}, host, opts('tool'))).content,
    'servers/db/run-sql.pyi\nservers/web-search/ping.pyi\nservers/web-search/search.pyi',
  );
});

test('readToolFile: compact Python signatures with one-line comments, and line ranges', async () => {
  const file = await runCodeModeTool('readToolFile', { fileName: 'servers/web-search.pyi' }, host, opts('server'));
  assert.equal(
    file.content,
    [
      '# web-search: 2 tools. Call as web_search.<tool>(name=value) inside executeToolCode.',
      'def ping() -> dict: ...',
      'def search(*, query: str, limit: Optional[int] = None, lang: Optional[str] = None, tags: Optional[list[str]] = None) -> dict: ...  # Search the web.',
    ].join('\n'),
  );
  const lines = await runCodeModeTool('readToolFile', { fileName: 'servers/web-search.pyi', startLine: 2, endLine: 2 }, host, opts('server'));
  assert.equal(lines.content, 'def ping() -> dict: ...');
  const tool = await runCodeModeTool('readToolFile', { fileName: 'servers/db/run-sql.pyi' }, host, opts('tool'));
  assert.match(tool.content, /^# db: 1 tool\. Call as db\.<tool>/);
  assert.match(tool.content, /def run_sql\(\*, sql: str\) -> dict: \.\.\.  # Run SQL\.$/m);
});

test('readToolFile: a bad file name or range answers an error naming the field', async () => {
  const missing = await runCodeModeTool('readToolFile', { fileName: 'servers/nope.pyi' }, host, opts('server'));
  assert.equal(missing.isError, true);
  assert.equal(missing.content, 'readToolFile: no file "servers/nope.pyi"; the files are: servers/db.pyi, servers/web-search.pyi');
  const noName = await runCodeModeTool('readToolFile', {}, host, opts('server'));
  assert.match(noName.content, /fileName is required/);
  const badLine = await runCodeModeTool('readToolFile', { fileName: 'servers/db.pyi', startLine: 0 }, host, opts('server'));
  assert.match(badLine.content, /startLine must be an integer of at least 1/);
  const past = await runCodeModeTool('readToolFile', { fileName: 'servers/db.pyi', startLine: 9 }, host, opts('server'));
  assert.match(past.content, /startLine 9 is past the end of servers\/db.pyi \(2 lines\)/);
});

test('getToolDocs: every parameter, and hints for unknown names', async () => {
  const docs = await runCodeModeTool('getToolDocs', { server: 'web-search', tool: 'search' }, host, opts('server'));
  assert.equal(docs.isError, undefined);
  assert.match(docs.content, /^web_search\.search: tool "search" of server "web-search"/);
  assert.match(docs.content, /Returns at most `limit` hits\./);
  assert.match(docs.content, /  query \(str, required\): What to look for\./);
  assert.match(docs.content, /  limit \(int, optional, default 5\)/);
  assert.match(docs.content, /  lang \(str, optional\) One of: "en", "de"\./);
  assert.match(docs.content, /r = web_search\.search\(query="\.\.\."\)/);
  const server = await runCodeModeTool('getToolDocs', { server: 'websearch', tool: 'search' }, host, opts('server'));
  assert.equal(server.isError, true);
  assert.equal(server.content, 'getToolDocs: unknown server "websearch"; available servers: db, web-search');
  const tool = await runCodeModeTool('getToolDocs', { server: 'db', tool: 'sql' }, host, opts('server'));
  assert.equal(tool.content, 'getToolDocs: server db has no tool "sql"; its tools: run-sql');
  const unknown = await runCodeModeTool('deleteEverything', {}, host, opts('server'));
  assert.match(unknown.content, /unknown code-mode tool "deleteEverything"/);
});

test('JSON schema types map to Python types; names become identifiers', () => {
  const cases: [unknown, string][] = [
    [{ type: 'string' }, 'str'],
    [{ type: 'integer' }, 'int'],
    [{ type: 'number' }, 'float'],
    [{ type: 'boolean' }, 'bool'],
    [{ type: 'object', properties: {} }, 'dict'],
    [{ type: 'array', items: { type: 'integer' } }, 'list[int]'],
    [{ type: 'array' }, 'list'],
    [{ type: ['string', 'null'] }, 'Optional[str]'],
    [{ anyOf: [{ type: 'integer' }, { type: 'null' }] }, 'Optional[int]'],
    [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, 'Union[int, str]'],
    [{ enum: ['a', 'b'] }, 'str'],
    [{}, 'Any'],
  ];
  for (const [schema, type] of cases) assert.equal(pyType(schema), type, JSON.stringify(schema));
  assert.equal(identifier('my-server'), 'my_server');
  assert.equal(identifier('class'), 'class_');
  assert.equal(identifier('1st'), '_1st');
});
