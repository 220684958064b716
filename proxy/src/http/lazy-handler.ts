// A request handler whose module is loaded on its first request: the management API (express and
// the routers) stays out of a gateway's memory until someone calls /api. The request waits (its
// body unread, so nothing is lost) while the module loads.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { log } from '../log.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export function lazyHandler(load: () => Promise<Handler>): Handler {
  let handler: Handler | undefined;
  let loading: Promise<Handler> | undefined;
  return (req, res) => {
    if (handler) return handler(req, res);
    loading ??= load().then((h) => (handler = h));
    loading.then(
      (h) => h(req, res),
      (err: unknown) => {
        // A module that failed to load fails every request the same way; the next one retries.
        loading = undefined;
        log.error('a request handler could not be loaded', { error: (err as Error).message });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'internal error: the handler could not be loaded', type: 'internal_error' } }));
      },
    );
  };
}
