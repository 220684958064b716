// executeToolCode in the real Starlark sandbox (starlark.wasm in a worker thread): each execution rule
// of the spec, the allow-list checked at call time, and the limits. The ToolHost is a plain object
// whose tools are real functions returning data, as an MCP client would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codeModePreflight, runCodeModeTool, type CodeModeRunOptions, type ToolHost } from '../../proxy/src/mcp/code-mode/index.ts';

type Call = { server: string; tool: string; args: Record<string, unknown> };
const calls: Call[] = [];
let slowAborted = 0;

const host: ToolHost = {
  servers: () => [
    {
      name: 'weather',
      tools: [
        {
          name: 'get-forecast',
          description: 'Forecast for a city.',
          inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] },
        },
        { name: 'delete_city', description: 'Removes a city.', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
      ],
    },
    {
      name: 'notes',
      tools: [
        { name: 'add', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
        { name: 'slow', inputSchema: { type: 'object' } },
        { name: 'broken', inputSchema: { type: 'object' } },
        { name: 'plain', inputSchema: { type: 'object' } },
        { name: 'huge', inputSchema: { type: 'object' } },
      ],
    },
  ],
  async call(server, tool, args, signal) {
    calls.push({ server, tool, args });
    const key = `${server}/${tool}`;
    if (key === 'weather/get-forecast') {
      const days = Array.from({ length: Number(args.days ?? 1) }, (_, i) => ({ day: i + 1, high: 20 + i }));
      return { content: [{ type: 'text', text: JSON.stringify({ city: args.city, days }) }] };
    }
    if (key === 'weather/delete_city') return { content: [{ type: 'text', text: '{"deleted":true}' }] };
    if (key === 'notes/add') return { content: [{ type: 'text', text: 'ok' }], structuredContent: { id: 7, text: args.text } };
    if (key === 'notes/huge') return { content: [{ type: 'text', text: 'x'.repeat(17 * 1024 * 1024) }] };
    if (key === 'notes/plain') return { content: [{ type: 'text', text: 'just words' }] };
    if (key === 'notes/broken') return { content: [{ type: 'text', text: 'disk full' }], isError: true };
    if (key === 'notes/slow') {
      return new Promise((_, reject) =>
        signal.addEventListener('abort', () => {
          slowAborted++;
          reject(new Error('aborted'));
        }),
      );
    }
    throw new Error(`no such tool ${key}`);
  },
};

const logs: string[] = [];
function options(over: Partial<CodeModeRunOptions> = {}): CodeModeRunOptions {
  return {
    bindingLevel: 'server',
    unattended: false,
    autoExecute: () => true,
    allowed: () => true,
    timeoutMs: 20_000,
    log: (line) => logs.push(line),
    ...over,
  };
}

async function run(code: string, over: Partial<CodeModeRunOptions> = {}): Promise<{ result?: unknown; error?: string; logs?: string[]; isError: boolean }> {
  const answer = await runCodeModeTool('executeToolCode', { code }, host, options(over));
  return { ...(JSON.parse(answer.content) as object), isError: answer.isError === true };
}

test('rules 1-2: servers are globals; tool calls are synchronous, keyword-only, and return dicts', async () => {
  calls.length = 0;
  const out = await run(
    'f = weather.get_forecast(city="Oslo", days=2)\n' +
      'n = notes.add(text="buy milk")\n' +
      'result = {"city": f["city"], "second": f.get("days")[1]["high"], "missing": f.get("nope", "dflt"), "id": n["id"], "plain": notes.plain()}',
  );
  assert.equal(out.isError, false, out.error);
  assert.deepEqual(out.result, { city: 'Oslo', second: 21, missing: 'dflt', id: 7, plain: 'just words' });
  // The host gets the MCP names, not the Starlark identifiers.
  assert.deepEqual(calls.slice(0, 2), [
    { server: 'weather', tool: 'get-forecast', args: { city: 'Oslo', days: 2 } },
    { server: 'notes', tool: 'add', args: { text: 'buy milk' } },
  ]);
  const positional = await run('weather.get_forecast("Oslo")');
  assert.equal(positional.isError, true);
  assert.match(positional.error!, /keyword arguments only/);
});

test('rule 3: print() goes to the log, `result` comes back as JSON', async () => {
  logs.length = 0;
  const out = await run('print("hello", 1)\nprint({"a": [1, 2]})\nresult = [None, True, 1.5, 12345678901234567890123, ("t", 1), {"k": {"n": []}}]');
  assert.deepEqual(logs, ['hello 1', '{"a": [1, 2]}']);
  assert.deepEqual(out.logs, logs);
  assert.equal(out.isError, false);
  const answer = await runCodeModeTool('executeToolCode', { code: 'result = 12345678901234567890123' }, host, options());
  assert.equal(answer.content, '{"result":12345678901234567890123}', 'big integers keep every digit');
  assert.deepEqual((await run('x = 1')).result, null, 'no result variable: null');
  const fn = await run('def f():\n  return 1\nresult = f');
  assert.equal(fn.isError, true);
  assert.match(fn.error!, /cannot encode a function as JSON/);
});

test('rule 4: no imports, classes, file I/O, network, random, time, load or recursion', async () => {
  const cases: [string, RegExp][] = [
    ['import json', /Imports are not available/],
    ['from os import path', /got from/],
    ['class A:\n  pass', /got class/],
    ['result = open("/etc/passwd")', /undefined: open/],
    ['result = random.random()', /undefined: random/],
    ['result = time.time()', /undefined: time/],
    ['result = urllib.request("http://example.com")', /undefined: urllib/],
    ['load("x.star", "y")', /load not implemented/],
    ['def f(n):\n  return f(n - 1) if n else 0\nresult = f(3)', /called recursively/],
  ];
  for (const [code, error] of cases) {
    const out = await run(code);
    assert.equal(out.isError, true, code);
    assert.match(out.error!, error, code);
  }
});

test('rule 5: each execution has its own context', async () => {
  assert.equal((await run('counter = 41\nresult = counter + 1')).result, 42);
  const second = await run('result = counter');
  assert.equal(second.isError, true);
  assert.match(second.error!, /undefined: counter/);
  const frozen = await run('weather.extra = 1');
  assert.equal(frozen.isError, true);
});

test('rule 5: the timeout stops a busy loop and a stuck tool call, and the next execution works', async () => {
  const busy = await run('while True:\n  pass', { timeoutMs: 300, limits: { maxSteps: 0 } });
  assert.equal(busy.isError, true);
  assert.match(busy.error!, /timed out after 300 ms/);
  // The terminated worker is replaced in the background; once this runs, the pool is warm again.
  assert.equal((await run('result = 1')).result, 1);
  const before = slowAborted;
  const stuck = await run('notes.slow()', { timeoutMs: 300 });
  assert.match(stuck.error!, /timed out after 300 ms/);
  assert.equal(slowAborted, before + 1, 'the in-flight tool call is aborted');
  assert.deepEqual((await run('result = weather.get_forecast(city="Rome")["city"]')).result, 'Rome');
});

test('rule 6: an unknown server or tool names the available ones', async () => {
  const server = await run('result = wether.get_forecast(city="x")');
  assert.equal(server.isError, true);
  assert.match(server.error!, /undefined: wether[\s\S]*Available servers: notes, weather/);
  const tool = await run('result = weather.forecast(city="x")');
  assert.match(tool.error!, /server weather has no tool "forecast"; its tools: delete_city, get_forecast/);
});

test('rule 7: unattended, every call is checked against tools_to_auto_execute at call time', async () => {
  const auto = (server: string, tool: string): boolean => server === 'weather' && tool === 'get-forecast';
  const unattended = { unattended: true, autoExecute: auto };
  calls.length = 0;
  assert.equal((await run('result = weather.get_forecast(city="Oslo")["city"]', unattended)).result, 'Oslo');
  const bypasses = [
    'weather.delete_city(city="Oslo")',
    'g = weather\ng.delete_city(city="Oslo")',
    'getattr(weather, "delete_city")(city="Oslo")',
    'fns = {"x": weather}\nfns["x"].delete_city(city="Oslo")',
    'def go(s):\n  return s.delete_city(city="Oslo")\ngo(weather)',
  ];
  for (const code of bypasses) {
    const out = await run(code, unattended);
    assert.equal(out.isError, true, code);
    assert.match(out.error!, /tool delete_city of server weather may not run unattended/, code);
  }
  assert.deepEqual(
    calls.map((c) => c.tool),
    ['get-forecast'],
    'no refused call reached the server',
  );
  // Code the application approved runs without tools_to_auto_execute ...
  assert.deepEqual((await run('result = weather.delete_city(city="Oslo")', { autoExecute: () => false })).result, { deleted: true });
  // ... but tools_to_execute always applies.
  const refused = await run('g = weather\nresult = g.delete_city(city="Oslo")', { allowed: (_s, t) => t !== 'delete_city' });
  assert.match(refused.error!, /tool delete_city of server weather is not allowed for this request \(tools_to_execute\)/);
});

test('rule 7: the pre-flight scan asks first for anything but direct auto-executable calls', () => {
  const auto = (server: string, tool: string): boolean => server === 'weather' && tool === 'get-forecast';
  assert.equal(codeModePreflight('r = weather.get_forecast(city="a")\nresult = r.get("days")', auto, host), true);
  assert.equal(codeModePreflight('# weather.delete_city(city="a")\ns = "weather.delete_city()"\nresult = 1', auto, host), true);
  assert.equal(codeModePreflight('weather.delete_city(city="a")', auto, host), false);
  assert.equal(codeModePreflight('g = weather\ng.get_forecast(city="a")', auto, host), false);
  assert.equal(codeModePreflight('getattr(weather, "get_forecast")(city="a")', auto, host), false);
  assert.equal(codeModePreflight('notes.add(text="a")', auto, host), false);
});

test('limits: steps, tool calls, output size', async () => {
  const steps = await run('x = 0\nfor i in range(1000000):\n  x += i', { limits: { maxSteps: 10_000 } });
  assert.match(steps.error!, /too many steps/);
  calls.length = 0;
  const many = await run('for i in range(10):\n  weather.get_forecast(city="c%d" % i)', { limits: { maxToolCalls: 3 } });
  assert.match(many.error!, /over the limit of 3 tool calls per execution/);
  assert.equal(calls.length, 3);
  const big = await run('result = "x" * 5000', { limits: { maxOutputBytes: 1000 } });
  assert.match(big.error!, /result is 5002 bytes of JSON, over the 1000-byte limit/);
  const chatty = await run('for i in range(100):\n  print("line %d " % i + "y" * 50)\nresult = "done"', { limits: { maxOutputBytes: 1000 } });
  assert.equal(chatty.result, 'done');
  assert.ok(chatty.logs!.length < 30);
  assert.match(chatty.logs!.at(-1)!, /print output truncated at 1000 bytes/);
});

test('limits: the memory ceiling stops a runaway allocation, and the next execution works', async () => {
  const limits = { maxMemoryBytes: 64 * 1024 * 1024, maxSteps: 0 };
  const out = await run('s = "x" * 200000000\nresult = len(s)', { limits });
  assert.equal(out.isError, true);
  assert.match(out.error!, /out of memory/);
  assert.equal((await run('result = len("x" * 1000000)', { limits })).result, 1000000);
});

test('tool failures reach the code as errors', async () => {
  const failed = await run('notes.broken()');
  assert.match(failed.error!, /Error in notes.broken: disk full/);
  const thrown = await run('weather.get_forecast(city=lambda: 1)');
  assert.match(thrown.error!, /Error in weather.get_forecast: argument "city": cannot encode a function as JSON/);
  const huge = await run('notes.huge()');
  assert.match(huge.error!, /Error in notes.huge: the tool's answer is \d+ bytes, over the 16777216-byte limit/);
});

test('concurrent executions each get their own sandbox and answers', async () => {
  const outs = await Promise.all(
    Array.from({ length: 7 }, (_, i) => run(`f = weather.get_forecast(city="c${i}", days=${i + 1})\nresult = [f["city"], len(f["days"])]`)),
  );
  assert.deepEqual(
    outs.map((o) => o.result),
    Array.from({ length: 7 }, (_, i) => [`c${i}`, i + 1]),
  );
});
