import type { Exchange } from '../http/exchange.ts';
import { sendJson } from '../http/respond.ts';
import { registry } from '../metrics/metrics.ts';

export function health(ex: Exchange): void {
  sendJson(ex.res, 200, { status: 'ok', config_hash: ex.snapshot.hash, providers: [...ex.snapshot.providers.keys()] });
}

export async function metrics(ex: Exchange): Promise<void> {
  const text = await registry.metrics();
  ex.res.writeHead(200, { 'content-type': registry.contentType });
  ex.res.end(text);
}
