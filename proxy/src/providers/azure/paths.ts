// Azure OpenAI request paths, below `{endpoint}/openai`. The adapter names operations the way Azure's
// deployments API does, with the bare model in place of the deployment; here the model becomes the
// key's deployment and the api-version is added. The Responses API exists only on Azure's v1 API
// (`/openai/v1/responses`, deployment in the body's `model`, no api-version); so are containers
// (`/openai/v1/containers...`, no deployment, no api-version) and Sora 2's videos
// (`/openai/v1/videos...`, the deployment in the create form's `model`).
import { isFile, type FormPart } from '../../unified/form.ts';

const DEPLOYMENT_OP = /^\/deployments\/([^/?]+)(\/[^?]*)$/;

/** `/deployments/{model}/chat/completions`: what the adapter asks for. */
export function deploymentOp(model: string, op: string): string {
  return `/deployments/${encodeURIComponent(model)}${op}`;
}

/** The deployment serving a model: the key's mapping, else a deployment named as the model. */
export function deploymentFor(model: string, deployments: Readonly<Record<string, string>>): string {
  return Object.hasOwn(deployments, model) ? deployments[model] : model;
}

/** Operations only Azure's v1 API serves, below `/openai/v1`. */
const V1_ONLY = ['/containers', '/videos'];
const isV1Only = (op: string): boolean => V1_ONLY.some((p) => op === p || op.startsWith(`${p}/`) || op.startsWith(`${p}?`));

/** Operation path as Azure serves it, with query string. */
export function azureOperationPath(op: string, deployments: Readonly<Record<string, string>>, apiVersion: string): string {
  const version = `api-version=${encodeURIComponent(apiVersion)}`;
  const m = DEPLOYMENT_OP.exec(op);
  if (m) return `${deploymentOp(deploymentFor(decodeURIComponent(m[1]), deployments), m[2])}?${version}`;
  if (op === '/responses') return '/v1/responses';
  if (isV1Only(op)) return `/v1${op}`;
  return `${op}${op.includes('?') ? '&' : '?'}${version}`;
}

/**
 * A JSON body naming the deployment in `model` (Responses, Foundry's OCR) whose model the key maps
 * to another deployment, re-serialized; undefined when nothing changes (the common case: no
 * mapping, so the body is not parsed at all).
 */
export function modelBodyFor(body: string | undefined, deployments: Readonly<Record<string, string>>): string | undefined {
  if (body === undefined || Object.keys(deployments).length === 0) return undefined;
  const parsed = JSON.parse(body) as { model?: unknown };
  if (typeof parsed.model !== 'string') return undefined;
  const deployment = deploymentFor(parsed.model, deployments);
  if (deployment === parsed.model) return undefined;
  return JSON.stringify({ ...parsed, model: deployment });
}

/** A form whose `model` part the key maps to another deployment, with that part renamed; undefined when nothing changes. */
export function formFor(form: readonly FormPart[] | undefined, deployments: Readonly<Record<string, string>>): FormPart[] | undefined {
  if (!form || Object.keys(deployments).length === 0) return undefined;
  const i = form.findIndex((p) => p.name === 'model' && !isFile(p));
  if (i < 0) return undefined;
  const part = form[i];
  if (isFile(part)) return undefined;
  const deployment = deploymentFor(part.value, deployments);
  if (deployment === part.value) return undefined;
  return form.map((p, j) => (j === i ? { name: 'model', value: deployment } : p));
}
