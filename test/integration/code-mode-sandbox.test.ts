// Code mode against a real MCP server: the published server-everything over stdio, reached through the
// official SDK client, called from Starlark. And a process that used code mode exits on its own (idle
// sandbox workers do not hold it open).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runCodeModeTool, type ToolHost } from '../../proxy/src/mcp/code-mode/index.ts';

const everything = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
let client: Client;
let host: ToolHost;

before(async () => {
  client = new Client({ name: 'code-mode-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' }));
  const { tools } = await client.listTools();
  host = {
    servers: () => [{ name: 'everything', tools }],
    call: (_server, tool, args, signal) => client.callTool({ name: tool, arguments: args }, undefined, { signal }),
  };
});
after(() => client?.close());

const opts = { bindingLevel: 'server' as const, unattended: true, autoExecute: () => true, allowed: () => true, timeoutMs: 20_000, log: () => {} };

test('Starlark calls the tools of a real MCP server and combines their answers', async () => {
  const answer = await runCodeModeTool(
    'executeToolCode',
    {
      code:
        'sums = [everything.get_sum(a=i, b=10) for i in range(3)]\n' +
        'echo = everything.echo(message="hi " + str(len(sums)))\n' +
        'print(echo)\n' +
        'result = {"sums": sums, "echo": echo, "structured": everything.get_structured_content(location="New York")}',
    },
    host,
    opts,
  );
  assert.equal(answer.isError, undefined, answer.content);
  const out = JSON.parse(answer.content) as { result: { sums: string[]; echo: string; structured: Record<string, unknown> }; logs: string[] };
  assert.deepEqual(out.result.sums, ['The sum of 0 and 10 is 10.', 'The sum of 1 and 10 is 11.', 'The sum of 2 and 10 is 12.']);
  assert.equal(out.result.echo, 'Echo: hi 3');
  assert.deepEqual(out.logs, ['Echo: hi 3']);
  assert.equal(typeof out.result.structured.temperature, 'number', 'structuredContent arrives as a dict');
});

test('the stub file lists the real tools with their parameters', async () => {
  const file = await runCodeModeTool('readToolFile', { fileName: 'servers/everything.pyi' }, host, opts);
  assert.match(file.content, /^def get_sum\(\*, a: float, b: float\) -> dict: \.\.\.  # Returns the sum of two numbers$/m);
  assert.match(file.content, /^def echo\(\*, message: str\) -> dict: \.\.\.  # Echoes back the input string$/m);
});

test('a process that ran code mode exits by itself', () => {
  const script = `
    import { runCodeModeTool } from ${JSON.stringify(new URL('../../proxy/src/mcp/code-mode/index.ts', import.meta.url).href)};
    const host = { servers: () => [], call: async () => null };
    const a = await runCodeModeTool('executeToolCode', { code: 'result = 6 * 7' }, host,
      { bindingLevel: 'server', unattended: false, autoExecute: () => true, allowed: () => true, timeoutMs: 10000, log: () => {} });
    console.log(a.content);`;
  const started = Date.now();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), '{"result":42}');
  assert.equal(child.stderr, '', 'no WASI experimental warning');
  assert.ok(Date.now() - started < 20_000);
});
