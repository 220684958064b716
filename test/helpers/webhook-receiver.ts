// A real HTTP webhook receiver for tests: records every delivery (headers, raw body, arrival time),
// verifies signatures with the standardwebhooks package as a user's receiver would, and misbehaves
// on demand (status codes, hanging, connection resets, slow answers).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { closeAtEnd } from './cleanup.ts';

export type Behaviour = number | 'hang' | 'reset' | { delayMs: number; status: number } | { redirect: string };

export interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: { event: string; created_at: string; data: Record<string, unknown> };
  at: number;
  /** Verified with the secret known at arrival (undefined when no secret was set yet). */
  verified?: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The most requests this receiver had open at once. */
  maxInFlight(): number;
  /** Decides the answer to the n-th request (0-based); default 200. */
  behave(fn: (n: number, r: Received) => Behaviour): void;
  setSecret(secret: string): void;
  verify(r: Received, secret: string): boolean;
  close(): Promise<void>;
}

export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  let behaviour: (n: number, r: Received) => Behaviour = () => 200;
  let secret: string | undefined;
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let maxInFlight = 0;
  const verify = (r: Received, s: string): boolean => {
    try {
      new Webhook(s).verify(r.body, r.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };
  const server: Server = createServer((req, res) => {
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    res.on('close', () => inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const r: Received = { id: String(req.headers['webhook-id']), headers: req.headers, body, json: JSON.parse(body), at: Date.now() };
      if (secret) r.verified = verify(r, secret);
      const n = received.length;
      received.push(r);
      const b = behaviour(n, r);
      if (b === 'hang') return;
      if (b === 'reset') return req.socket.destroy();
      const answer = (status: number) => res.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
      if (typeof b === 'number') answer(b);
      else if ('redirect' in b) res.writeHead(307, { location: b.redirect }).end();
      else setTimeout(() => answer(b.status), b.delayMs);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/hook`,
    port,
    received,
    maxInFlight: () => maxInFlight,
    behave: (fn) => (behaviour = fn),
    setSecret: (s) => (secret = s),
    verify,
    // Also closed at the end of the file, should a failed hook skip the test's own close.
    close: closeAtEnd(async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      // Connections opened after this (a sender still retrying) are ended too.
      server.on('connection', (s) => s.destroy());
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await closed;
    }),
  };
}
