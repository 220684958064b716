// The error code each failed answer went out with: noted by respond.ts (sendError, a stream's
// in-band error) and read by the access line. Its own module, importing nothing, so respond.ts
// (which the operations import) does not reach the access log's imports.
import type { ServerResponse } from 'node:http';

const codes = new WeakMap<ServerResponse, string>();

export function noteError(res: ServerResponse, code: string): void {
  codes.set(res, code);
}

export function answeredError(res: ServerResponse): string | undefined {
  return codes.get(res);
}
