// Which provider paths a passthrough caller reaches without a management credential: the
// provider's inference paths (per wire format, as data below), plus what the provider's config lists
// in `passthrough_allowed_paths`. Everything else a provider serves under the same key (its admin,
// billing, fine-tuning or key-management API) is not for whoever holds a virtual key.
//
// Paths are matched after percent-decoding (so `%2F` counts as a separator) and with the API
// version the client wrote (`/v1/chat/completions`, or `/chat/completions` for providers without one).
import type { WireFormat } from './catalog.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';

interface PathRule {
  methods: ReadonlySet<Method>;
  path: RegExp;
}

const POST = new Set<Method>(['POST']);
const READ = new Set<Method>(['GET', 'HEAD']);
/** A version segment, optional: OpenAI-compatible providers without one (`pathPrefix: ''`) are reached without it. */
const V = '(?:/v[0-9][a-z0-9]*)?';
const SEG = '[^/]+';

const rule = (methods: ReadonlySet<Method>, source: string): PathRule => ({ methods, path: new RegExp(`^${source}/?$`) });

const OPENAI: readonly PathRule[] = [
  rule(POST, `${V}/(?:chat/completions|completions|embeddings|responses|moderations|responses/input_tokens|ocr|decisions|systemone)`),
  rule(POST, `${V}/audio/(?:speech|transcriptions|translations)`),
  rule(POST, `${V}/images/(?:generations|edits|variations)`),
  rule(READ, `${V}/models(?:/${SEG})?`),
];

/** The inference paths of each wire format: what its SDKs call to generate, embed, count or list models. */
export const INFERENCE_PATHS: Readonly<Record<WireFormat, readonly PathRule[]>> = {
  openai: OPENAI,
  anthropic: [rule(POST, `${V}/(?:messages|messages/count_tokens|complete)`), rule(READ, `${V}/models(?:/${SEG})?`)],
  gemini: [
    rule(POST, `${V}/models/${SEG}:(?:generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)`),
    rule(READ, `${V}/models(?:/${SEG})?`),
  ],
  cohere: [rule(POST, `${V}/(?:chat|embed|rerank|tokenize|detokenize)`), rule(READ, `${V}/models(?:/${SEG})?`)],
  // Model ids may be ARNs, which hold '/' once decoded.
  bedrock: [rule(POST, '/model/.+/(?:converse|converse-stream|invoke|invoke-with-response-stream)'), rule(POST, '/model/.+/count-tokens')],
  vertex: [rule(POST, `${V}/projects/${SEG}/locations/${SEG}/publishers/${SEG}/models/${SEG}:(?:generateContent|streamGenerateContent|countTokens|rawPredict|streamRawPredict|predict)`)],
  azure: [
    rule(POST, `/openai/deployments/${SEG}/(?:chat/completions|completions|embeddings|audio/(?:speech|transcriptions|translations)|images/generations)`),
    ...OPENAI.map((r) => ({ methods: r.methods, path: new RegExp(`^/openai${r.path.source.slice(1)}`) })),
  ],
};

/**
 * A `passthrough_allowed_paths` entry as a matcher: the path as written after
 * `/<provider>_passthrough`, where `*` stands for one path segment (or part of one) and a trailing
 * `/**` for anything below.
 */
export function allowedPathMatcher(pattern: string): RegExp {
  const deep = pattern.endsWith('/**');
  const body = deep ? pattern.slice(0, -3) : pattern;
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${source}${deep ? '(?:/.*)?' : '/?'}$`);
}

/** The path fully percent-decoded (it was checked to decode cleanly), backslashes read as '/'. */
function decoded(rest: string): string {
  let text = rest;
  for (let round = 0; round < 4 && text.includes('%'); round++) {
    const next = decodeURIComponent(text);
    if (next === text) break;
    text = next;
  }
  return text.replace(/\\/g, '/');
}

/** True when `rest` is one of the format's inference paths for `method`, or matches one of `extra`. */
export function passthroughPathAllowed(format: WireFormat, extra: readonly RegExp[], method: string, rest: string): boolean {
  const path = decoded(rest);
  if (extra.some((re) => re.test(path))) return true;
  return INFERENCE_PATHS[format].some((r) => r.methods.has(method as Method) && r.path.test(path));
}
