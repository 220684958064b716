// Plain JSON Schema nodes (what TypeBox schemas are, minus TypeBox's symbol tags) and the small edits
// the CRD specs make to the proxy's schemas. Paths name schema nodes the way a reader names fields:
// `keys[].valueFrom` (array items), `extra_headers.*` (map values), '' (the root).

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  nullable?: boolean;
  default?: unknown;
  [extension: string]: unknown;
}

/** A deep copy as plain JSON: TypeBox's symbol-keyed tags are dropped, nothing is shared with the source. */
export function clone(schema: unknown): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** Splits `a.b[].c.*` into steps. */
export function pathSteps(path: string): string[] {
  if (path === '') return [];
  return path.split('.').flatMap((seg) => {
    const steps: string[] = [];
    let s = seg;
    while (s.endsWith('[]')) {
      steps.unshift('[]');
      s = s.slice(0, -2);
    }
    return [s, ...steps];
  });
}

/** The node a path names, or an Error naming the first step that does not exist. */
export function nodeAt(root: JsonSchema, path: string): JsonSchema {
  let node = root;
  for (const step of pathSteps(path)) {
    let next: JsonSchema | undefined;
    if (step === '[]') next = node.items;
    else if (step === '*') next = mapValues(node);
    else next = node.properties?.[step];
    if (!next) throw new Error(`schema path '${path}': no '${step}'`);
    node = next;
  }
  return node;
}

/** The value schema of a map (`Type.Record` gives `patternProperties`; plain JSON Schema `additionalProperties`). */
export function mapValues(node: JsonSchema): JsonSchema | undefined {
  if (node.patternProperties) return Object.values(node.patternProperties)[0];
  return typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
}

/** Removes properties (and their `required` entries) from the object at `path`. */
export function omit(root: JsonSchema, path: string, names: readonly string[]): void {
  const node = objectAt(root, path);
  for (const n of names) {
    if (!node.properties?.[n]) throw new Error(`schema path '${path}': no property '${n}' to omit`);
    delete node.properties[n];
  }
  setRequired(node, (node.required ?? []).filter((r) => !names.includes(r)));
}

/** Makes properties of the object at `path` optional. */
export function optional(root: JsonSchema, path: string, names: readonly string[]): void {
  const node = objectAt(root, path);
  for (const n of names) if (!node.properties?.[n]) throw new Error(`schema path '${path}': no property '${n}'`);
  setRequired(node, (node.required ?? []).filter((r) => !names.includes(r)));
}

/** Adds (or replaces) properties of the object at `path`, listed first so `kubectl explain` shows them on top. */
export function addProperties(root: JsonSchema, path: string, props: Record<string, JsonSchema>, required: readonly string[] = []): void {
  const node = objectAt(root, path);
  const rest = Object.fromEntries(Object.entries(node.properties ?? {}).filter(([k]) => !(k in props)));
  node.properties = { ...clone(props) as Record<string, JsonSchema>, ...rest };
  setRequired(node, [...new Set([...(node.required ?? []), ...required])]);
}

/** Replaces the node at `path` (not the root) with a copy of `schema`, keeping the old description when the new one has none. */
export function replace(root: JsonSchema, path: string, schema: JsonSchema): void {
  const steps = pathSteps(path);
  const last = steps.pop();
  if (last === undefined) throw new Error('replace: the root cannot be replaced');
  const parent = nodeAt(root, steps.join('.').replace(/\.\[\]/g, '[]'));
  const copy = clone(schema);
  if (last === '[]') {
    if (!parent.items) throw new Error(`schema path '${path}': not an array`);
    if (!copy.description && parent.items.description) copy.description = parent.items.description;
    parent.items = copy;
  } else {
    const old = parent.properties?.[last];
    if (!old || !parent.properties) throw new Error(`schema path '${path}': no '${last}'`);
    if (!copy.description && old.description) copy.description = old.description;
    parent.properties[last] = copy;
  }
}

function objectAt(root: JsonSchema, path: string): JsonSchema {
  const node = nodeAt(root, path);
  if (node.type !== 'object' || !node.properties) throw new Error(`schema path '${path}': not an object with properties`);
  return node;
}

function setRequired(node: JsonSchema, required: string[]): void {
  if (required.length) node.required = required;
  else delete node.required;
}
