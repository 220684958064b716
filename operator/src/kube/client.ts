// A small REST client over the kubeconfig's credentials: the operator needs only a handful of
// verbs (get, list, server-side apply, merge-patch status, create, replace, delete), and speaking
// them directly keeps content types and error bodies explicit.
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';

export const REQUEST_TIMEOUT_MS = 15_000;

/** A non-2xx answer from the API server, with its Status reason (NotFound, Conflict, ...). */
export class KubeApiError extends Error {
  readonly statusCode: number;
  readonly reason: string;
  constructor(statusCode: number, reason: string, message: string) {
    super(message);
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.statusCode === 409;

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
}

export class KubeClient {
  readonly kc: KubeConfig;
  /**
   * client-node builds a new undici Agent for every request context: each request would open its own
   * TLS connection (a handshake on both sides, and an idle socket left behind). One is kept and
   * reused, so requests share keep-alive connections. Credentials (headers) are still applied per request.
   */
  #dispatcher: ReturnType<RequestContext['getDispatcher']>;
  #dispatcherFor: string | undefined;

  constructor(kc: KubeConfig) {
    this.kc = kc;
  }

  async request<T>(method: keyof typeof HttpMethod, path: string, opts: RequestOptions = {}): Promise<T> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const ctx = new RequestContext(url.toString(), HttpMethod[method]);
    await this.kc.applySecurityAuthentication(ctx);
    const headers: Record<string, string> = { ...ctx.getHeaders(), accept: 'application/json' };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    if (this.#dispatcherFor !== cluster.server) {
      this.#dispatcher = ctx.getDispatcher();
      this.#dispatcherFor = cluster.server;
    }
    const res = await fetch(url, {
      method,
      headers,
      body,
      dispatcher: this.#dispatcher,
      signal: AbortSignal.timeout(opts.timeoutMs ?? REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) {
      let reason = res.statusText;
      let message = text;
      try {
        const status = JSON.parse(text) as { reason?: string; message?: string };
        reason = status.reason ?? reason;
        message = status.message ?? message;
      } catch {
        // not a Status object; the raw text says what happened
      }
      throw new KubeApiError(res.status, reason, `${method} ${path}: ${res.status} ${message}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** Server-side apply: `obj` is the whole intent of `fieldManager` for this object. */
  apply<T>(path: string, obj: unknown, fieldManager: string): Promise<T> {
    return this.request<T>('PATCH', path, {
      query: { fieldManager, force: 'true' },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    });
  }

  mergePatch<T>(path: string, patch: unknown, fieldManager: string): Promise<T> {
    return this.request<T>('PATCH', path, { query: { fieldManager }, body: patch, contentType: 'application/merge-patch+json' });
  }

  create<T>(path: string, obj: unknown, fieldManager?: string): Promise<T> {
    return this.request<T>('POST', path, { query: { fieldManager }, body: obj });
  }

  replace<T>(path: string, obj: unknown, fieldManager?: string): Promise<T> {
    return this.request<T>('PUT', path, { query: { fieldManager }, body: obj });
  }

  delete(path: string, opts: { uid?: string } = {}): Promise<unknown> {
    // A uid precondition deletes only the object we looked at, not a newer one of the same name.
    const body = opts.uid ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: opts.uid } } : undefined;
    return this.request('DELETE', path, { body });
  }
}

/** `/api/v1/namespaces/ns/configmaps`, `/apis/group/version/namespaces/ns/plural[/name]`; ns undefined = all namespaces. */
export function resourcePath(apiVersion: string, plural: string, namespace?: string, name?: string): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
}
