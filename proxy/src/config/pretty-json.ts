// JSON.stringify(value, null, 2) in steps: the config store's file of a large configuration is
// megabytes of text, and a write from a reload should not hold the event loop for the whole of it.
// The first levels are laid out here, a slice of array items per step; each item is stringified
// whole and indented to its place. The text is the same, byte for byte, as JSON.stringify's.

/** Array items stringified per step. */
const ITEMS_PER_STEP = 250;
/** Objects and arrays down to this depth are laid out here (the store's document.governance.virtual_keys is at 3); deeper values are stringified whole. */
const LAID_OUT_DEPTH = 4;

export function* prettyJsonSteps(value: unknown): Generator<void, string | undefined> {
  const counter = { items: 0 };
  return yield* layout(value, '', 0, counter);
}

function* layout(value: unknown, pad: string, depth: number, counter: { items: number }): Generator<void, string | undefined> {
  if (depth >= LAID_OUT_DEPTH || value === null || typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    // Strings hold no raw line breaks (JSON escapes them), so indenting every line is exact.
    return JSON.stringify(value, null, 2)?.replaceAll('\n', `\n${pad}`);
  }
  const inner = `${pad}  `;
  const parts: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      parts.push((yield* layout(item, inner, depth + 1, counter)) ?? 'null');
      if (++counter.items % ITEMS_PER_STEP === 0) yield;
    }
    return parts.length ? `[\n${inner}${parts.join(`,\n${inner}`)}\n${pad}]` : '[]';
  }
  for (const key of Object.keys(value)) {
    const text = yield* layout((value as Record<string, unknown>)[key], inner, depth + 1, counter);
    if (text !== undefined) parts.push(`${JSON.stringify(key)}: ${text}`);
  }
  return parts.length ? `{\n${inner}${parts.join(`,\n${inner}`)}\n${pad}}` : '{}';
}
