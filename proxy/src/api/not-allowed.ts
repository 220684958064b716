// A known /api path asked with a method it does not have.
import type { Request } from 'express';
import { GatewayError } from '../unified/errors.ts';

export function methodNotAllowed(req: Request): never {
  throw new GatewayError(405, `method ${req.method} is not allowed on ${req.originalUrl.split('?')[0]}`, { type: 'method_not_allowed' });
}
