// The OpenAI-format request body: the unified request itself, minus the gateway's own fields.
// Apart from adapter.ts so media.ts can use it without a cycle.
/** Strips gateway-only fields and sets the upstream model. */
export function toUpstreamBody<T extends { model: string; fallbacks?: string[] }>(req: T, model: string): Omit<T, 'fallbacks'> {
  const { fallbacks: _f, ...rest } = req;
  return { ...rest, model };
}
