// Calls the management API of a running gateway the way curl or a dashboard would: plain fetch,
// JSON in and out, any auth header the test chooses.
export interface ApiAnswer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface ApiError {
  is_bifrost_error: boolean;
  status_code: number;
  error: { message: string; type: string; code?: string; param?: string | null };
}

export type Api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiAnswer<T>>;

/** A caller bound to one gateway and (optionally) one set of credentials. */
export function apiClient(g: { url: string }, auth: Record<string, string> = {}): Api {
  return async <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer<T>> => {
    const res = await fetch(`${g.url}${path}`, {
      method,
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...auth, ...headers },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
}

export const basic = (user: string, password: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
