// Where a Vertex AI call goes: the regional host, the publisher a model belongs to, and the
// project/location scope a key adds to the path.
import type { VertexKeyConfig } from '../../schema/gateway.ts';

/** `mistralai`: Mistral's partner models (OCR through rawPredict), addressed by the operations that use them. */
export type Publisher = 'google' | 'anthropic' | 'mistralai';

/** Claude models are served by the Anthropic publisher (rawPredict); everything else by Google. */
export function publisherFor(model: string): Publisher {
  return /^claude/i.test(model) ? 'anthropic' : 'google';
}

/** `https://us-central1-aiplatform.googleapis.com`; `global` and the `us`/`eu` multi-regions have their own hosts. */
export function vertexOrigin(region: string): string {
  if (region === 'global') return 'https://aiplatform.googleapis.com';
  if (region === 'us' || region === 'eu') return `https://aiplatform.${region}.rep.googleapis.com`;
  return `https://${region}-aiplatform.googleapis.com`;
}

/** Model ids keep `@` (Claude versions such as `claude-sonnet-4-5@20250929`) as Vertex documents them. */
function encodeModel(model: string): string {
  return encodeURIComponent(model).replace(/%40/g, '@');
}

/** `/publishers/{publisher}/models/{model}:{method}`, scoped to a project and location later by the key. */
export function publisherModelPath(publisher: Publisher, model: string, method: string): string {
  return `/publishers/${publisher}/models/${encodeModel(model)}:${method}`;
}

const MODEL_SEGMENT = /\/publishers\/(google|anthropic|mistralai)\/models\/([^/:?]+)(:[^/]*)$/;

/**
 * Adds `/projects/{project}/locations/{region}` in front of the publisher path and applies the
 * key's deployments: a model mapped to another id keeps the publisher, a numeric id is a deployed
 * endpoint (`/endpoints/{id}`), as for tuned models.
 */
export function scopedPath(path: string, cfg: VertexKeyConfig): string {
  const scope = `/projects/${encodeURIComponent(cfg.project_id)}/locations/${encodeURIComponent(cfg.region)}`;
  const m = MODEL_SEGMENT.exec(path);
  if (!m) return path;
  const [whole, publisher, encModel, method] = m;
  const deployment = cfg.deployments?.[decodeURIComponent(encModel)];
  const prefix = path.slice(0, m.index);
  if (deployment && /^\d+$/.test(deployment)) return `${prefix}${scope}/endpoints/${deployment}${method}`;
  if (deployment) return `${prefix}${scope}/publishers/${publisher}/models/${encodeModel(deployment)}${method}`;
  return `${prefix}${scope}${whole}`;
}
