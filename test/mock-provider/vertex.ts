// Vertex AI wire format under /vertex: Google's OAuth2 token endpoint for service accounts (the
// JWT-bearer grant, assertions verified against the account's public key), and the regional
// aiplatform API for Gemini (`publishers/google/models/{m}:generateContent`, `:streamGenerateContent`,
// `:countTokens`, text-embedding `:predict`) and Claude (`publishers/anthropic/models/{m}:rawPredict`,
// `:streamRawPredict`) and Mistral's OCR model (`publishers/mistralai/models/{m}:rawPredict`, data
// URLs only). Model calls need `Authorization: Bearer <issued token>`; Gemini models also take a
// Vertex API key. The work itself is the Gemini, Anthropic and Mistral mocks' own handlers.
//
// Service accounts exist only at test time: `createServiceAccount(mockUrl)` makes a key pair,
// trusts its public key and returns the key file a gateway would be configured with.

import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { anthropic, anthropicError } from './anthropic.ts';
import { gemini, geminiError } from './gemini.ts';
import { isNonexistentModel } from './models.ts';
import { ocr as mistralOcr } from './mistral.ts';
import { json } from './reply.ts';
import { modelDimensions } from './embeddings.ts';
import { countWords, embed, isObject } from './text.ts';
import type { ErrorExtra, FormatModule, JsonObject, Reply, RequestContext, Route } from './types.ts';
import { vertexVideoMethod } from './videos.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Seconds of clock skew tolerated on `iat`, and the longest assertion Google accepts. */
const SKEW_S = 300;
const MAX_ASSERTION_S = 3600;

// ---------------------------------------------------------------- service accounts and tokens

interface TrustedAccount {
  publicKey: KeyObject;
  keyId: string;
  tokenUri: string;
  tokenLifetimeSeconds: number;
}

interface IssuedToken {
  email: string;
  expiresAt: number;
}

// Shared by every mock server in the process: accounts are created by the tests that run them.
const accounts = new Map<string, TrustedAccount>();
const issued = new Map<string, IssuedToken>();
let accountCounter = 0;

export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
}

export interface ServiceAccountOptions {
  /** `expires_in` of the tokens issued to this account (default 3599, as Google answers). */
  tokenLifetimeSeconds?: number;
  projectId?: string;
}

/** A fresh RSA key pair whose public half this mock trusts; the key file points at `${mockUrl}/vertex/token`. */
export function createServiceAccount(mockUrl: string, opts: ServiceAccountOptions = {}): ServiceAccountKeyFile {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const projectId = opts.projectId ?? 'mock-project';
  const email = `gateway-${++accountCounter}-${randomBytes(3).toString('hex')}@${projectId}.iam.gserviceaccount.com`;
  const keyId = randomBytes(20).toString('hex');
  const tokenUri = `${mockUrl}/vertex/token`;
  accounts.set(email, { publicKey, keyId, tokenUri, tokenLifetimeSeconds: opts.tokenLifetimeSeconds ?? 3599 });
  return {
    type: 'service_account',
    project_id: projectId,
    private_key_id: keyId,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: email,
    client_id: String(100000000000000000000n + BigInt(accountCounter)),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
  };
}

/** Revokes every token issued to the account (as a key rotation or an admin would): calls with them get 401. */
export function revokeTokens(email: string): void {
  for (const [token, t] of issued) if (t.email === email) issued.delete(token);
}

function oauthError(status: number, error: string, description: string): Reply {
  return json(status, { error, error_description: description }, { 'content-type': 'application/json; charset=utf-8' });
}

function decodeSegment(segment: string): JsonObject | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** POST /token, form-encoded `grant_type` + `assertion`, as https://oauth2.googleapis.com/token takes it. */
function token(ctx: RequestContext): Reply {
  const type = String(ctx.headers['content-type'] ?? '');
  if (!type.startsWith('application/x-www-form-urlencoded')) {
    return oauthError(400, 'invalid_request', 'Invalid Content-Type; expected application/x-www-form-urlencoded');
  }
  const form = new URLSearchParams(ctx.raw.toString('utf8'));
  const grant = form.get('grant_type');
  if (grant !== JWT_BEARER) return oauthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grant ?? ''}`);
  const parts = (form.get('assertion') ?? '').split('.');
  const header = parts.length === 3 ? decodeSegment(parts[0]) : undefined;
  const claims = parts.length === 3 ? decodeSegment(parts[1]) : undefined;
  if (!header || !claims) return oauthError(400, 'invalid_grant', 'Invalid JWT: the assertion is not a well-formed JWT.');
  if (header.alg !== 'RS256') return oauthError(400, 'invalid_grant', 'Invalid JWT: only RS256 is supported.');
  const account = typeof claims.iss === 'string' ? accounts.get(claims.iss) : undefined;
  if (!account) return oauthError(400, 'invalid_grant', 'Invalid grant: account not found');
  if (header.kid !== undefined && header.kid !== account.keyId) return oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  if (!verify('sha256', signed, account.publicKey, Buffer.from(parts[2], 'base64url'))) {
    return oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
  }
  if (claims.aud !== account.tokenUri) return oauthError(400, 'invalid_grant', `Invalid JWT: Failed audience check. The right audience is ${account.tokenUri}`);
  const now = Math.floor(Date.now() / 1000);
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || typeof exp !== 'number' || iat > now + SKEW_S || exp <= now || exp - iat > MAX_ASSERTION_S) {
    return oauthError(400, 'invalid_grant',
      'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
  }
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  if (!scopes.includes(CLOUD_PLATFORM_SCOPE)) return oauthError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  const accessToken = `ya29.c.mock${randomBytes(24).toString('base64url')}`;
  issued.set(accessToken, { email: claims.iss as string, expiresAt: Date.now() + account.tokenLifetimeSeconds * 1000 });
  return json(200, { access_token: accessToken, expires_in: account.tokenLifetimeSeconds, token_type: 'Bearer' },
    { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' });
}

// ---------------------------------------------------------------- errors

/** Google's error shape, as the Gemini mock writes it, naming the Vertex service in ErrorInfo. */
export function vertexError(status: number, message?: string, extra: ErrorExtra = {}): Reply {
  const reply = geminiError(status, message, extra);
  if (reply.kind !== 'json' || !extra.code) return reply;
  return { ...reply, body: reply.body.replace('generativelanguage.googleapis.com', 'aiplatform.googleapis.com') };
}

// ---------------------------------------------------------------- auth on the API

const UNAUTHENTICATED = 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';

function header(ctx: RequestContext, name: string): string | undefined {
  const v = ctx.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : undefined;
}

function authenticate(ctx: RequestContext): Reply | undefined {
  if (ctx.path === '/token') return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(ctx, 'authorization') ?? '')?.[1];
  if (bearer) {
    const t = issued.get(bearer);
    if (!t || t.expiresAt <= Date.now()) return vertexError(401, UNAUTHENTICATED, { code: 'ACCESS_TOKEN_EXPIRED' });
    return undefined;
  }
  const apiKey = header(ctx, 'x-goog-api-key') ?? ctx.query.key;
  if (apiKey) {
    // Vertex API keys reach Google's own models only.
    if (ctx.path.includes('/publishers/anthropic/')) {
      return vertexError(401, 'API keys are not supported by this API. Expected OAuth2 access token or other authentication credentials that assert a principal.', { code: 'CREDENTIALS_MISSING' });
    }
    if (apiKey.startsWith('invalid')) return vertexError(400, 'API key not valid. Please pass a valid API key.', { code: 'API_KEY_INVALID' });
    return undefined;
  }
  return vertexError(401, UNAUTHENTICATED, { code: 'CREDENTIALS_MISSING' });
}

// ---------------------------------------------------------------- Gemini on Vertex

/** Vertex rejects the `id` the Gemini API allows on function calls and responses. */
function functionIdProblem(body: unknown): Reply | undefined {
  const contents = isObject(body) && Array.isArray(body.contents) ? body.contents : [];
  for (let i = 0; i < contents.length; i++) {
    const c: unknown = contents[i];
    const parts = isObject(c) && Array.isArray(c.parts) ? c.parts : [];
    for (let j = 0; j < parts.length; j++) {
      const p: unknown = parts[j];
      if (!isObject(p)) continue;
      for (const [field, snake] of [['functionCall', 'function_call'], ['functionResponse', 'function_response']] as const) {
        const v = p[field] ?? p[snake];
        if (isObject(v) && v.id !== undefined) {
          return vertexError(400, `Invalid JSON payload received. Unknown name "id" at 'contents[${i}].parts[${j}].${snake}': Cannot find field.`);
        }
      }
    }
  }
  return undefined;
}

const PREDICT_FIELDS = new Set(['instances', 'parameters']);
const INSTANCE_FIELDS = new Set(['content', 'task_type', 'taskType', 'title']);
const PARAMETER_FIELDS = new Set(['autoTruncate', 'outputDimensionality']);

/** Text-embedding `:predict`: `{instances:[{content}], parameters:{outputDimensionality}}`. */
function predictEmbeddings(ctx: RequestContext, model: string): Reply {
  const bad = (message: string): Reply => vertexError(400, message);
  if (ctx.badJson) return bad('Invalid JSON payload received. Unexpected token.');
  const body = ctx.body;
  if (!isObject(body)) return bad('Invalid JSON payload received. Expected an object.');
  for (const k of Object.keys(body)) if (!PREDICT_FIELDS.has(k)) return bad(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`);
  const instances = body.instances;
  if (!Array.isArray(instances) || instances.length === 0) return bad('instances must be a non-empty list.');
  // gemini-embedding-001 takes one text per request.
  if (model.startsWith('gemini-embedding') && instances.length > 1) return bad(`Only one instance per request is supported for ${model}.`);
  const params = body.parameters === undefined ? {} : body.parameters;
  if (!isObject(params)) return bad('parameters must be an object.');
  for (const k of Object.keys(params)) if (!PARAMETER_FIELDS.has(k)) return bad(`Unknown parameter "${k}".`);
  const dims = params.outputDimensionality;
  if (dims !== undefined && (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1)) return bad('outputDimensionality must be a positive integer.');
  const predictions: JsonObject[] = [];
  let characters = 0;
  for (let i = 0; i < instances.length; i++) {
    const inst: unknown = instances[i];
    if (!isObject(inst)) return bad(`instances[${i}] must be an object.`);
    for (const k of Object.keys(inst)) if (!INSTANCE_FIELDS.has(k)) return bad(`instances[${i}]: unknown field "${k}".`);
    if (typeof inst.content !== 'string' || !inst.content) return bad(`instances[${i}].content must be a non-empty string.`);
    characters += inst.content.length;
    predictions.push({
      embeddings: {
        statistics: { truncated: false, token_count: countWords(inst.content) },
        values: Array.from(embed(inst.content, typeof dims === 'number' ? dims : modelDimensions(model))),
      },
    });
  }
  return json(200, { predictions, metadata: { billableCharacterCount: characters } });
}

function geminiMethod(method: string, model: string, body: unknown): Route | undefined {
  if (method === 'predict') return { model, handle: (ctx) => predictEmbeddings(ctx, model) };
  if (!['generateContent', 'streamGenerateContent', 'countTokens'].includes(method)) return undefined;
  const inner = gemini.route('POST', `/v1/models/${encodeURIComponent(model)}:${method}`, body);
  if (!inner) return undefined;
  return { model, handle: (ctx) => functionIdProblem(ctx.body) ?? inner.handle(ctx) };
}

// ---------------------------------------------------------------- Claude on Vertex

/** The Messages body minus `model`, plus `anthropic_version`; answered by the Anthropic mock with the URL's model. */
function claudeMethod(method: string, model: string): Route | undefined {
  if (method !== 'rawPredict' && method !== 'streamRawPredict') return undefined;
  return {
    model,
    handle: (ctx) => {
      if (ctx.badJson || !isObject(ctx.body)) return anthropicError(400, 'There was an issue with the request body: the body is not valid JSON.');
      const { anthropic_version: version, ...rest } = ctx.body;
      if (rest.model !== undefined) return anthropicError(400, 'model: Extra inputs are not permitted');
      if (version === undefined) return anthropicError(400, 'anthropic_version: Field required');
      if (version !== VERTEX_ANTHROPIC_VERSION) return anthropicError(400, `anthropic_version: Input should be '${VERTEX_ANTHROPIC_VERSION}'`);
      const body = { ...rest, model };
      const inner = anthropic.route('POST', '/v1/messages', body);
      if (!inner) return anthropicError(404, 'Not Found');
      return inner.handle({ ...ctx, path: '/v1/messages', body });
    },
  };
}

// ---------------------------------------------------------------- Mistral OCR on Vertex

/**
 * Mistral's OCR request and answer behind rawPredict (the model in the URL and the body). Vertex
 * has no internet access and no Files API: a document must be inline, as a data URL.
 */
function mistralMethod(method: string, model: string): Route | undefined {
  if (method !== 'rawPredict') return undefined;
  return {
    model,
    handle: (ctx) => {
      const doc = isObject(ctx.body) && isObject(ctx.body.document) ? ctx.body.document : undefined;
      const url = doc && (doc.document_url ?? (isObject(doc.image_url) ? doc.image_url.url : doc.image_url));
      if (typeof url !== 'string' || !url.startsWith('data:')) return vertexError(400, 'Only base64-encoded documents (data URIs) are supported.');
      return mistralOcr(ctx);
    },
  };
}

// ---------------------------------------------------------------- module

const MODEL_PATH = /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic|mistralai)\/models\/([^/:]+):([A-Za-z]+)$/;

function notFoundModel(path: string): Reply {
  const name = path.slice(path.indexOf('/projects/') + 1, path.lastIndexOf(':'));
  return vertexError(404, `Publisher Model \`${decodeURIComponent(name)}\` was not found or your project does not have access to it. Please ensure you are using a valid model version.`);
}

export const vertex: FormatModule = {
  format: 'vertex',
  route(method, path, body): Route | undefined {
    if (path === '/token') return method === 'POST' ? { model: undefined, handle: token } : undefined;
    const m = MODEL_PATH.exec(path);
    if (!m || method !== 'POST') return undefined;
    const publisher = m[4];
    const model = decodeURIComponent(m[5]);
    const video = publisher === 'google' ? vertexVideoMethod(m[6], model, `projects/${m[2]}/locations/${m[3]}`, vertexError) : undefined;
    const route = video ?? (publisher === 'google' ? geminiMethod(m[6], model, body) : publisher === 'mistralai' ? mistralMethod(m[6], model) : claudeMethod(m[6], model));
    if (!route) return undefined;
    return { model, handle: (ctx) => (isNonexistentModel(model) ? notFoundModel(path) : route.handle(ctx)) };
  },
  authenticate,
  error: vertexError,
  notFound(method, path) {
    return vertexError(404, `Method not found: ${method} ${path}`);
  },
};
