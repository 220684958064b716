// The code-mode view of the servers: Starlark-safe names, compact Python stubs (.pyi) generated from
// the MCP input schemas, and per-tool documentation.

export interface HostTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

export interface CatalogTool extends HostTool {
  /** Attribute name on the server object (the tool name made a valid identifier). */
  attr: string;
}

export interface CatalogServer {
  name: string;
  /** Global name in Starlark (the server name made a valid identifier). */
  global: string;
  tools: CatalogTool[];
}

// Starlark keywords and the Python keywords Starlark reserves, plus its constants.
const RESERVED = new Set(
  'and as assert async await break class continue def del elif else except finally for from global if import in is lambda load nonlocal not or pass raise return try while with yield None True False'.split(
    ' ',
  ),
);

export function identifier(name: string): string {
  let id = name.replace(/[^A-Za-z0-9_]/g, '_');
  if (!id || /^[0-9]/.test(id)) id = `_${id}`;
  return RESERVED.has(id) ? `${id}_` : id;
}

function uniqueIdentifiers(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    const base = identifier(name);
    let id = base;
    for (let i = 2; taken.has(id); i++) id = `${base}_${i}`;
    taken.add(id);
    return id;
  });
}

/** The servers sorted by name, with identifiers for the sandbox. */
export function catalog(servers: { name: string; tools: HostTool[] }[]): CatalogServer[] {
  const sorted = [...servers].sort((a, b) => a.name.localeCompare(b.name));
  const globals = uniqueIdentifiers(sorted.map((s) => s.name));
  return sorted.map((s, i) => {
    const tools = [...s.tools].sort((a, b) => a.name.localeCompare(b.name));
    const attrs = uniqueIdentifiers(tools.map((t) => t.name));
    return { name: s.name, global: globals[i], tools: tools.map((t, j) => ({ ...t, attr: attrs[j] })) };
  });
}

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const SIMPLE: Record<string, string> = { string: 'str', integer: 'int', number: 'float', boolean: 'bool', object: 'dict', null: 'None' };

function union(types: string[]): string {
  const nullable = types.includes('None');
  const rest = [...new Set(types.filter((t) => t !== 'None'))];
  const inner = rest.length === 0 ? 'None' : rest.length === 1 ? rest[0] : rest.includes('Any') ? 'Any' : `Union[${rest.join(', ')}]`;
  return nullable && inner !== 'None' && inner !== 'Any' ? `Optional[${inner}]` : inner;
}

/** The Python type of a JSON schema: str, int, float, bool, list[...], dict, Optional[...], Any. */
export function pyType(schema: unknown, depth = 0): string {
  if (!isSchema(schema) || depth > 4) return 'Any';
  const type = schema.type;
  if (Array.isArray(type)) return union(type.map((t) => pyType({ ...schema, type: t }, depth + 1)));
  if (typeof type === 'string') {
    if (type === 'array') return schema.items === undefined ? 'list' : `list[${pyType(schema.items, depth + 1)}]`;
    return SIMPLE[type] ?? 'Any';
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return union(alternatives.map((s) => pyType(s, depth + 1)));
  if (Array.isArray(schema.enum)) return union(schema.enum.map((v) => (v === null ? 'None' : pyType({ type: jsonType(v) }, depth + 1))));
  if ('const' in schema) return pyType({ type: jsonType(schema.const) }, depth + 1);
  if (isSchema(schema.properties)) return 'dict';
  return 'Any';
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

interface Param {
  name: string;
  type: string;
  required: boolean;
  schema: Schema;
}

function params(tool: HostTool): Param[] {
  const schema = isSchema(tool.inputSchema) ? tool.inputSchema : {};
  const props = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const list = Object.entries(props).map(([name, s]) => ({ name, type: pyType(s), required: required.has(name), schema: isSchema(s) ? s : {} }));
  // Required first, as Python signatures read.
  return [...list.filter((p) => p.required), ...list.filter((p) => !p.required)];
}

function firstLine(text: string | undefined, max = 160): string {
  const line = (text ?? '').trim().split(/\r?\n/, 1)[0].trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `def tool(*, a: str, b: Optional[int] = None) -> dict: ...` (parameters keyword-only, as called). */
export function signature(tool: CatalogTool): string {
  const ps = params(tool).map((p) => {
    // A name that is not an identifier can still be passed with **{"name": value}.
    const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(p.name) ? p.name : `**{${JSON.stringify(p.name)}: value}`;
    if (p.required) return `${name}: ${p.type}`;
    const type = p.type.startsWith('Optional[') || p.type === 'Any' || p.type === 'None' ? p.type : `Optional[${p.type}]`;
    return `${name}: ${type} = None`;
  });
  return `def ${tool.attr}(${ps.length ? `*, ${ps.join(', ')}` : ''}) -> dict`;
}

function stubLine(tool: CatalogTool): string {
  const comment = firstLine(tool.description);
  return `${signature(tool)}: ...${comment ? `  # ${comment}` : ''}`;
}

function header(server: CatalogServer, count: number): string {
  return `# ${server.name}: ${count} tool${count === 1 ? '' : 's'}. Call as ${server.global}.<tool>(name=value) inside executeToolCode.`;
}

/** The virtual file tree: path -> content. */
export function toolFiles(servers: CatalogServer[], level: 'server' | 'tool'): Map<string, string> {
  const files = new Map<string, string>();
  for (const server of servers) {
    if (level === 'server') {
      files.set(`servers/${server.name}.pyi`, [header(server, server.tools.length), ...server.tools.map(stubLine)].join('\n') + '\n');
    } else {
      for (const tool of server.tools) files.set(`servers/${server.name}/${tool.name}.pyi`, `${header(server, 1)}\n${stubLine(tool)}\n`);
    }
  }
  return files;
}

function exampleValue(p: Param): string {
  if (p.schema.default !== undefined) return JSON.stringify(p.schema.default);
  if (Array.isArray(p.schema.enum) && p.schema.enum.length) return JSON.stringify(p.schema.enum[0]);
  const base = p.type.replace(/^Optional\[(.*)\]$/, '$1');
  if (base === 'str') return '"..."';
  if (base === 'int') return '1';
  if (base === 'float') return '1.0';
  if (base === 'bool') return 'True';
  if (base.startsWith('list')) return '[]';
  if (base === 'dict') return '{}';
  return 'None';
}

/** Detailed documentation of one tool. */
export function toolDocs(server: CatalogServer, tool: CatalogTool): string {
  const ps = params(tool);
  const lines = [`${server.global}.${tool.attr}: tool "${tool.name}" of server "${server.name}"`, ''];
  if (tool.description?.trim()) lines.push(tool.description.trim(), '');
  lines.push(signature(tool), '');
  if (ps.length) {
    lines.push('Parameters (keyword arguments):');
    for (const p of ps) {
      const facts = [p.type, p.required ? 'required' : 'optional'];
      if (p.schema.default !== undefined) facts.push(`default ${JSON.stringify(p.schema.default)}`);
      let line = `  ${p.name} (${facts.join(', ')})`;
      if (typeof p.schema.description === 'string' && p.schema.description.trim()) line += `: ${p.schema.description.trim()}`;
      if (Array.isArray(p.schema.enum)) line += ` One of: ${p.schema.enum.map((v) => JSON.stringify(v)).join(', ')}.`;
      lines.push(line);
    }
    lines.push('');
  } else {
    lines.push('No parameters.', '');
  }
  const example = ps.filter((p) => p.required).map((p) => `${p.name}=${exampleValue(p)}`);
  lines.push('Example:', `  r = ${server.global}.${tool.attr}(${example.join(', ')})`);
  lines.push('Returns the tool\'s JSON result as a dict (read with r["key"] or r.get("key")); a plain-text result comes back as a str.');
  return lines.join('\n');
}
