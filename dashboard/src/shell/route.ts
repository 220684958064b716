// The hash router: `#/<page>/<rest...>?<params>`. Hash routing needs no server support and keeps
// deep links (a log's detail view) working when the page is reloaded.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: string;
  rest: string[];
  params: URLSearchParams;
  /** The whole hash, to tell navigations apart. */
  hash: string;
}

export const DEFAULT_PAGE = 'overview';

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const q = h.indexOf('?');
  const path = q >= 0 ? h.slice(0, q) : h;
  const params = new URLSearchParams(q >= 0 ? h.slice(q + 1) : '');
  const parts = path.split('/').filter((s) => s !== '').map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  return { page: parts[0] ?? DEFAULT_PAGE, rest: parts.slice(1), params, hash };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** `#/page/a/b?x=1` from parts, leaving out empty parameters. */
export function hrefOf(page: string, rest: readonly string[] = [], params?: Record<string, string | undefined> | URLSearchParams): string {
  const path = [page, ...rest].map(encodeURIComponent).join('/');
  const q = new URLSearchParams();
  if (params instanceof URLSearchParams) params.forEach((v, k) => v !== '' && q.append(k, v));
  else for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return `#/${path}${s ? `?${s}` : ''}`;
}

/** Changes the hash without adding a history entry (filters typed into a form). */
export function replaceHash(href: string): void {
  if (location.hash === href) return;
  history.replaceState(null, '', href);
  dispatchEvent(new HashChangeEvent('hashchange'));
}
