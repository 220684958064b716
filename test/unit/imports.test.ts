// The module structure (proxy, operator and dashboard sources): no import cycles between files, and
// no edge that inverts a layer. The rules are read from the sources (every `import`, `import type`,
// `export … from` and `import()`), so a new file is checked the moment it exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCES = ['proxy/src', 'operator/src', 'dashboard/src'];

interface Edge {
  to: string;
  typeOnly: boolean;
}

// Statements start a line; a `from '…'` may come after several lines of names. Comments never start
// with `import`/`export`, so doc comments that quote code are not read as imports.
const STATIC = /^[ \t]*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Relative imports of one file's text, resolved against the file's path (repo-relative). */
function parseImports(file: string, text: string): Edge[] {
  const edges: Edge[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (spec.startsWith('.')) edges.push({ to: relative(ROOT, resolve(ROOT, dirname(file), spec)), typeOnly });
  };
  for (const m of text.matchAll(STATIC)) add(m[3], m[2] !== undefined);
  for (const m of text.matchAll(DYNAMIC)) add(m[1], false);
  return edges;
}

function listTs(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') || f.endsWith('.tsx'))
    .map((f) => join(dir, f));
}

function readGraph(): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>();
  for (const dir of SOURCES) for (const f of listTs(dir)) graph.set(f, parseImports(f, readFileSync(join(ROOT, f), 'utf8')));
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself): the cycles. */
function cycles(graph: ReadonlyMap<string, readonly Edge[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (graph.get(v) ?? []).some((e) => e.to === v)) found.push(scc.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const P = 'proxy/src/';
const ANSWERS = `${P}api/answers.ts`;
const under = (...dirs: string[]) => (f: string) => dirs.some((d) => f.startsWith(`${P}${d}/`) || f === `${P}${d}`);

interface Rule {
  name: string;
  why: string;
  from: (file: string) => boolean;
  /** True when the edge is forbidden. */
  forbids: (to: string, edge: Edge) => boolean;
}

const RULES: Rule[] = [
  {
    name: 'schema/** imports only schema/** and unified/**',
    why: 'the schemas are the ground floor every part reads (config, governance, providers, the operator); a schema that imported a floor above would drag it into all of them',
    from: under('schema'),
    forbids: (to) => !to.startsWith(`${P}schema/`) && !to.startsWith(`${P}unified/`),
  },
  {
    name: 'http/** imports no governance, endpoint, api or route table',
    why: 'the HTTP front only reads and answers; policy and operations reach it through the route table and the services object',
    from: under('http'),
    forbids: under('governance', 'endpoints', 'api', 'routes.ts', 'main.ts'),
  },
  {
    name: 'governance/** imports no endpoint, api or http',
    why: 'governance is stages the pipeline runs; it must work for any route and with no HTTP request at all (execute)',
    from: under('governance'),
    forbids: under('endpoints', 'api', 'http', 'routes.ts', 'main.ts'),
  },
  {
    name: 'providers/** is pure translation',
    why: 'adapters turn the unified format into a provider format and back; they are tested alone and know nothing of requests, policy or routes',
    from: under('providers'),
    forbids: under('pipeline', 'governance', 'routing', 'endpoints', 'api', 'http', 'logs', 'metrics', 'state', 'services.ts', 'routes.ts', 'main.ts'),
  },
  {
    name: 'unified/** imports only unified/**',
    why: 'the unified format is the bottom layer every other part speaks; it depends on nothing',
    from: under('unified'),
    forbids: (to) => !to.startsWith(`${P}unified/`),
  },
  {
    name: 'pipeline/** imports no endpoint, api or http',
    why: 'execute() runs the pipeline with no HTTP response (async jobs, agents); only http/respond.ts writes answers',
    from: under('pipeline'),
    forbids: under('endpoints', 'api', 'http', 'routes.ts', 'main.ts'),
  },
  {
    name: 'pipeline/** imports no stage module, types included',
    why: 'stages plug into the pipeline: each declares its own part of the request context and of the services (module augmentation), so a new cross-cutting feature is a new file and never an edit of the core',
    from: under('pipeline'),
    forbids: under('governance', 'routing', 'cache', 'logs', 'metrics', 'mcp', 'dashboard', 'async', 'webhooks', 'state', 'tracing', 'services.ts', 'builtin-stages.ts', 'plugins.ts'),
  },
  {
    name: 'config/** imports no pipeline, endpoint, api or http',
    why: 'a snapshot is compiled from config alone, so every source (file, Redis, Kubernetes) and the operator can build one',
    from: under('config'),
    forbids: under('pipeline', 'endpoints', 'api', 'http', 'logs', 'metrics', 'services.ts', 'routes.ts', 'main.ts'),
  },
  {
    name: 'config/** imports no plugin registry and no stage',
    why: 'the config check also runs in the operator; plugin names are data (schema/plugins.ts), so checking or compiling a document never loads the stages plugins.ts builds',
    from: under('config'),
    forbids: under('plugins.ts', 'cache', 'mcp'),
  },
  {
    name: 'config/** reads only the floors below it: schema, unified, providers, routing, upstream and the log',
    why: 'config compiles documents into snapshots that every stage reads; what it compiles or checks (governance rules and runtime, webhook rules) lives in config/, so nothing it imports can import a snapshot back',
    from: under('config'),
    forbids: (to) => to.startsWith(P) && !under('config', 'schema', 'unified', 'providers', 'routing', 'upstream', 'log.ts', 'lazy.ts')(to),
  },
  {
    name: 'upstream/** and routing/** sit on the floors above the ground: upstream reads only unified/, routing only schema/',
    why: 'the egress guards, SSE parser and pools, and CEL routing, are read by config, providers and the stages; one import upward would tie them to what compiles or runs them',
    from: under('upstream', 'routing'),
    forbids: (to) => to.startsWith(P) && !under('upstream', 'routing', 'unified', 'schema')(to),
  },
  {
    name: 'providers/** imports nothing from config/**',
    why: 'the runtime a provider is called with is declared in providers/runtime.ts; adapters read the schema floor, not the compiler that builds snapshots (which imports governance and routing)',
    from: under('providers'),
    forbids: under('config'),
  },
  {
    name: 'tracing/** is a stage and hooks: no endpoint, api, http or route table, and no stage it wraps',
    why: 'tracing wraps the stages through builtin-stages.ts and watches attempts and tool calls through the hooks invoke.ts and the MCP manager declare; importing a stage or a front door would make it one more edit of the parts it observes',
    from: under('tracing'),
    forbids: under('endpoints', 'api', 'http', 'routes.ts', 'main.ts', 'gateway.ts', 'cache', 'logs', 'metrics', 'async', 'webhooks', 'builtin-stages.ts', 'services.ts', 'plugins.ts'),
  },
  {
    name: 'logs/** imports no endpoint, api or http',
    why: 'request logs are written by a stage and read by /api; the store itself serves both and depends on neither',
    from: under('logs'),
    forbids: under('endpoints', 'api', 'http', 'routes.ts', 'main.ts'),
  },
  {
    name: 'dashboard/src imports from the proxy only the types of proxy/src/api/answers.ts',
    why: 'the dashboard is a browser bundle: /api answer shapes are shared, type-only (erased by the build), so no server code reaches the page',
    from: (f) => f.startsWith('dashboard/'),
    forbids: (to, edge) => to.startsWith('proxy/') && (to !== ANSWERS || !edge.typeOnly),
  },
  {
    name: 'proxy/src/api/answers.ts takes only types',
    why: 'the dashboard imports it: a value import would put server code into the bundle (and what it reaches must typecheck in the browser build, which dashboard/tsconfig.json checks)',
    from: (f) => f === ANSWERS,
    forbids: (_to, edge) => !edge.typeOnly,
  },
  {
    name: 'audit/** imports no endpoint, api or http',
    why: 'the audit log and the management keys are stores over the logs database that /api and the gateway use; they know nothing of HTTP',
    from: under('audit'),
    forbids: under('endpoints', 'api', 'http', 'routes.ts', 'main.ts'),
  },
  {
    name: 'logs/** imports nothing of audit/**',
    why: 'the audit stores stand on the logs floor (its driver and migrations); an import back would tie the request-log store to them',
    from: under('logs'),
    forbids: under('audit'),
  },
  {
    name: 'operations/** imports no endpoint, api, async job or route table',
    why: 'operations are transport-neutral: HTTP routes, async jobs and agent turns all run them through execute(), so none of those may be needed to run one',
    from: under('operations'),
    forbids: under('endpoints', 'api', 'async', 'routes.ts', 'main.ts', 'services.ts'),
  },
  {
    name: 'unified/operations.ts (the operations table) imports nothing',
    why: 'the table is data every layer reads (routes, async, cache, MCP, logs, the snapshot, the provider catalog): reading it must load no code',
    from: (f) => f === `${P}unified/operations.ts`,
    forbids: () => true,
  },
  {
    name: 'async/** imports no endpoint, api or route table',
    why: 'jobs run operations in process (operations/execute.ts); the HTTP handler of /v1/async only reads, calls async/ and answers, so it sits above the jobs',
    from: under('async'),
    forbids: under('endpoints', 'api', 'routes.ts', 'main.ts'),
  },
  {
    name: 'only main.ts imports gateway.ts, and nothing imports main.ts',
    why: 'gateway.ts is the composition root, the one place that knows every part; a module importing it (or the command line) would depend on the whole gateway and close a loop through it',
    from: (f) => f.startsWith(P) && f !== `${P}main.ts`,
    forbids: under('gateway.ts', 'main.ts'),
  },
  {
    name: 'the proxy imports nothing from the operator',
    why: 'the operator is a separate process and image; the proxy must build and run without it',
    from: (f) => f.startsWith(P),
    forbids: (to) => to.startsWith('operator/'),
  },
  {
    name: 'the operator imports only proxy/src/contract.ts from the proxy',
    why: 'one contract module (schemas, document checks, log) keeps proxy internals free to change without breaking the operator',
    from: (f) => f.startsWith('operator/'),
    forbids: (to) => to.startsWith(P) && to !== `${P}contract.ts`,
  },
];

function violations(graph: ReadonlyMap<string, readonly Edge[]>): string[] {
  const out: string[] = [];
  for (const [file, edges] of graph) {
    for (const rule of RULES) {
      if (!rule.from(file)) continue;
      for (const e of edges) if (rule.forbids(e.to, e)) out.push(`${file} -> ${e.to}: ${rule.name} (${rule.why})`);
    }
  }
  return out;
}

test('the parser reads every kind of import and nothing in comments', () => {
  const text = [
    "import { a } from './a.ts';",
    'import type {',
    '  B,',
    '  C,',
    "} from '../b.ts';",
    "export { d } from './d.ts';",
    "export * from './e.ts';",
    "import './side-effect.ts';",
    "import { readFileSync } from 'node:fs';",
    "const f = await import('./f.ts');",
    "// import { x } from './commented.ts';",
    " * import { y } from './doc-comment.ts';",
  ].join('\n');
  assert.deepEqual(parseImports('proxy/src/x/file.ts', text), [
    { to: 'proxy/src/x/a.ts', typeOnly: false },
    { to: 'proxy/src/b.ts', typeOnly: true },
    { to: 'proxy/src/x/d.ts', typeOnly: false },
    { to: 'proxy/src/x/e.ts', typeOnly: false },
    { to: 'proxy/src/x/side-effect.ts', typeOnly: false },
    { to: 'proxy/src/x/f.ts', typeOnly: false },
  ]);
});

test('the checks catch a cycle, a type-only cycle and a forbidden edge', () => {
  const g = new Map<string, Edge[]>([
    [`${P}a.ts`, [{ to: `${P}b.ts`, typeOnly: false }]],
    [`${P}b.ts`, [{ to: `${P}c.ts`, typeOnly: true }]],
    [`${P}c.ts`, [{ to: `${P}a.ts`, typeOnly: false }]],
    [`${P}http/x.ts`, [{ to: `${P}governance/y.ts`, typeOnly: true }]],
    [`${P}governance/y.ts`, []],
    ['operator/src/z.ts', [{ to: `${P}config/load.ts`, typeOnly: false }]],
  ]);
  assert.deepEqual(cycles(g), [[`${P}a.ts`, `${P}b.ts`, `${P}c.ts`]]);
  const v = violations(g);
  assert.equal(v.length, 2);
  assert.match(v[0], /^proxy\/src\/http\/x\.ts -> proxy\/src\/governance\/y\.ts: http/);
  assert.match(v[1], /^operator\/src\/z\.ts -> proxy\/src\/config\/load\.ts: the operator/);
});

test('the dashboard may take the types of the /api answers module, and nothing else of the proxy', () => {
  const g = new Map<string, Edge[]>([
    [
      'dashboard/src/pages/x.tsx',
      [
        { to: ANSWERS, typeOnly: true },
        { to: ANSWERS, typeOnly: false },
        { to: `${P}logs/record.ts`, typeOnly: true },
        { to: 'dashboard/src/lib/api.ts', typeOnly: false },
      ],
    ],
    [ANSWERS, [{ to: `${P}logs/record.ts`, typeOnly: true }, { to: `${P}logs/store.ts`, typeOnly: false }]],
  ]);
  const v = violations(g);
  assert.equal(v.length, 3);
  assert.match(v[0], /x\.tsx -> proxy\/src\/api\/answers\.ts: dashboard/);
  assert.match(v[1], /x\.tsx -> proxy\/src\/logs\/record\.ts: dashboard/);
  assert.match(v[2], /answers\.ts -> proxy\/src\/logs\/store\.ts: proxy\/src\/api\/answers\.ts takes only types/);
});

test('every relative import names a file that exists', () => {
  const graph = readGraph();
  // A parser that silently found nothing would pass every rule below.
  assert.ok(graph.size > 200, `only ${graph.size} files read`);
  const edges = [...graph.values()].reduce((n, e) => n + e.length, 0);
  assert.ok(edges > 800, `only ${edges} imports read`);
  const missing = [...graph].flatMap(([f, es]) => es.filter((e) => !existsSync(join(ROOT, e.to))).map((e) => `${f} -> ${e.to}`));
  assert.deepEqual(missing, []);
});

test('no import cycles between files (type imports included)', () => {
  assert.deepEqual(cycles(readGraph()), []);
});

test('no import crosses a layer the wrong way', () => {
  assert.deepEqual(violations(readGraph()), []);
});

/** Every file `start` reaches through relative imports (type imports included), itself too. */
function closure(graph: ReadonlyMap<string, readonly Edge[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const todo = [start];
  for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
    if (seen.has(f)) continue;
    seen.add(f);
    for (const e of graph.get(f) ?? []) todo.push(e.to);
  }
  return seen;
}

test('the closure follows imports transitively, type imports too, and stops at known files', () => {
  const g = new Map<string, Edge[]>([
    ['a.ts', [{ to: 'b.ts', typeOnly: true }]],
    ['b.ts', [{ to: 'c.ts', typeOnly: false }, { to: 'a.ts', typeOnly: false }]],
    ['c.ts', []],
    ['d.ts', [{ to: 'a.ts', typeOnly: false }]],
  ]);
  assert.deepEqual([...closure(g, 'a.ts')].sort(), ['a.ts', 'b.ts', 'c.ts']);
});

test('the operator loads a small part of the proxy: fewer than 30 files from contract.ts, no stage folder', () => {
  const reached = [...closure(readGraph(), `${P}contract.ts`)].filter((f) => f.startsWith(P)).sort();
  // The operator checks documents with the proxy's own schemas and checks; it must not load the
  // request path (the stages and their stores), which would make it start slowly, pull in drivers
  // it never uses, and break whenever a stage changes. Type imports count: they couple too.
  assert.ok(reached.length < 30, `contract.ts reaches ${reached.length} proxy files:\n${reached.join('\n')}`);
  // The pipeline and the cache, logs and MCP stages serve requests; the operator serves none.
  assert.deepEqual(reached.filter(under('pipeline', 'cache', 'logs', 'mcp')), []);
});
