// Preloaded (node --import) into peers that bind every interface by default: a listen(port)
// call without a host, or with a wildcard host, binds 127.0.0.1 instead.
import { Server } from 'node:net';

type Listen = (...args: unknown[]) => Server;
const original = Server.prototype.listen as unknown as Listen;
const WILDCARD = new Set([undefined, null, '', '0.0.0.0', '::']);

(Server.prototype as unknown as { listen: Listen }).listen = function listen(this: Server, ...args: unknown[]): Server {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    if (WILDCARD.has(args[1] as string | undefined) || typeof args[1] === 'function') {
      const rest = typeof args[1] === 'function' ? args.slice(1) : args.slice(2);
      return original.call(this, Number(args[0]), '127.0.0.1', ...rest);
    }
  } else if (typeof args[0] === 'object' && args[0] !== null && 'port' in args[0]) {
    const o = args[0] as { host?: string };
    if (WILDCARD.has(o.host)) return original.call(this, { ...args[0], host: '127.0.0.1' }, ...args.slice(1));
  }
  return original.call(this, ...args);
};
