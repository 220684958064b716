// Minimal checks that an upstream answer has the shape the translators index into. Translators
// call them first; a failure is a ShapeError, which the pipeline reports as a 502
// upstream_invalid_response naming the provider (see asUpstreamFault), never a 200 with garbage.

export class ShapeError extends Error {}

type Obj = Record<string, unknown>;

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The answer itself must be a JSON object. */
export function answerObject(body: unknown): Obj {
  if (!isObject(body)) throw new ShapeError(`expected a JSON object, got ${describe(body)}`);
  return body;
}

/** `body[field]` is a list of objects (`optional`: or absent/null). */
export function objectList(body: unknown, field: string, optional = false): Obj[] {
  const b = answerObject(body);
  const v = b[field];
  if (optional && (v === undefined || v === null)) return [];
  if (!Array.isArray(v)) throw new ShapeError(`'${field}' is ${describe(v)}, not a list`);
  v.forEach((item, i) => {
    if (!isObject(item)) throw new ShapeError(`'${field}[${i}]' is ${describe(item)}, not an object`);
  });
  return v as Obj[];
}

/** An OpenAI chat completion: `choices[].message` objects. */
export function checkOpenAIChat(body: unknown): void {
  objectList(body, 'choices').forEach((c, i) => {
    if (!isObject(c.message)) throw new ShapeError(`'choices[${i}].message' is ${describe(c.message)}, not an object`);
  });
}

/** An OpenAI stream chunk: a `choices` list (possibly empty, on the usage chunk). */
export function checkOpenAIChunk(body: unknown): void {
  objectList(body, 'choices');
}

export function checkStringField(body: unknown, field: string): void {
  const v = answerObject(body)[field];
  if (typeof v !== 'string') throw new ShapeError(`'${field}' is ${describe(v)}, not a string`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (v === undefined) return 'missing';
  return `a ${typeof v}`;
}
