// OAuth2 access tokens for a service account (Google's JWT-bearer flow): a JWT signed with the
// account's RSA key (RS256) is exchanged at the key file's token_uri. Tokens are cached per account,
// shared by every key and config snapshot that uses it, refreshed shortly before they expire, and
// dropped when Vertex rejects one. Concurrent requests share one exchange.
import { sign } from 'node:crypto';
import { GatewayError } from '../../unified/errors.ts';
import { poolFor } from '../../upstream/pools.ts';
import type { ServiceAccount } from './credentials.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google accepts assertions valid for at most an hour. */
const ASSERTION_LIFETIME_S = 3600;
/** Refresh this long before expiry (capped at a tenth of the token's lifetime for short-lived tokens). */
const REFRESH_MARGIN_MS = 5 * 60_000;
const TOKEN_TIMEOUT_MS = 30_000;

export interface JwtClaims {
  iss: string;
  scope: string;
  aud: string;
  iat: number;
  exp: number;
}

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The signed assertion for `nowSeconds` (Unix seconds). */
export function jwtAssertion(account: ServiceAccount, nowSeconds: number): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(account.privateKeyId && { kid: account.privateKeyId }) };
  const claims: JwtClaims = {
    iss: account.clientEmail,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: account.tokenUri,
    iat: nowSeconds,
    exp: nowSeconds + ASSERTION_LIFETIME_S,
  };
  const input = `${b64url(header)}.${b64url(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), account.privateKey).toString('base64url')}`;
}

export interface IssuedToken {
  accessToken: string;
  /** Seconds the token is valid for, as the endpoint said. */
  expiresIn: number;
}

/** One exchange at the account's token_uri. Failures are GatewayErrors (5xx and transport ones retryable). */
export async function exchangeAssertion(account: ServiceAccount, assertion: string): Promise<IssuedToken> {
  const url = new URL(account.tokenUri);
  const who = `service account '${account.clientEmail}'`;
  let res;
  try {
    res = await poolFor(url.origin, 4).request({
      method: 'POST',
      path: url.pathname + url.search,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
      headersTimeout: TOKEN_TIMEOUT_MS,
      bodyTimeout: TOKEN_TIMEOUT_MS,
    });
  } catch (err) {
    throw new GatewayError(502, `could not reach the token endpoint ${url.origin} for ${who}: ${(err as Error).message}`, {
      type: 'upstream_connection_error',
      provider: 'vertex',
    });
  }
  const text = await res.body.text().catch(() => '');
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page): reported by status below.
  }
  if (res.statusCode >= 200 && res.statusCode < 300 && typeof body.access_token === 'string' && body.access_token) {
    const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : ASSERTION_LIFETIME_S;
    return { accessToken: body.access_token, expiresIn };
  }
  const reason = [body.error, body.error_description].filter((v) => typeof v === 'string' && v).join(': ') || `HTTP ${res.statusCode}`;
  if (res.statusCode >= 500) {
    throw new GatewayError(502, `the token endpoint failed for ${who}: ${reason}`, { provider: 'vertex', upstream: true });
  }
  throw new GatewayError(401, `the token endpoint refused ${who}: ${reason}`, {
    type: 'authentication_error',
    code: typeof body.error === 'string' ? body.error : undefined,
    provider: 'vertex',
    upstream: true,
  });
}

interface CachedToken {
  value: string;
  /** Clock time after which the token is fetched anew (shortly before it expires). */
  refreshAt: number;
}

interface Entry {
  current?: CachedToken;
  pending?: Promise<CachedToken>;
}

export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: () => number;

  /** `clock` (milliseconds) decides when a cached token is due; tests move it instead of waiting. */
  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /** A valid access token for the account: the cached one, or a fresh one. */
  async token(account: ServiceAccount): Promise<string> {
    let entry = this.#entries.get(account.id);
    if (!entry) this.#entries.set(account.id, (entry = {}));
    if (entry.current && this.#clock() < entry.current.refreshAt) return entry.current.value;
    entry.pending ??= this.#refresh(account, entry);
    return (await entry.pending).value;
  }

  /** Vertex rejected `token`: forget it unless a newer one already replaced it. */
  reject(account: ServiceAccount, token: string): void {
    const entry = this.#entries.get(account.id);
    if (entry?.current?.value === token) entry.current = undefined;
  }

  async #refresh(account: ServiceAccount, entry: Entry): Promise<CachedToken> {
    try {
      entry.current = await this.#fetch(account);
      return entry.current;
    } finally {
      entry.pending = undefined;
    }
  }

  async #fetch(account: ServiceAccount): Promise<CachedToken> {
    // The lifetime counts from before the exchange: the token was issued at some point during it.
    const started = this.#clock();
    // The assertion carries real time: Google rejects one issued in the future or long ago.
    const issued = await exchangeAssertion(account, jwtAssertion(account, Math.floor(Date.now() / 1000)));
    const lifetimeMs = issued.expiresIn * 1000;
    const expiresAt = started + lifetimeMs;
    return { value: issued.accessToken, refreshAt: expiresAt - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 10) };
  }
}

/** The process-wide cache every Vertex key uses. */
export const tokens = new TokenCache();
