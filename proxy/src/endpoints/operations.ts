// The HTTP handler of each operation of the table, built once at start and shared by every path
// the operation is served at (each OpenAI-format prefix, the Azure deployment routes).
import type { Handler } from '../http/server.ts';
import { OPERATION_ROUTES } from '../operations/specs.ts';
import type { OperationName } from '../unified/operations.ts';
import { httpInference } from './serve.ts';

const HANDLERS: ReadonlyMap<OperationName, Handler> = new Map([...OPERATION_ROUTES].map(([name, route]) => [name, httpInference(route)]));

export function operationHandler(name: OperationName): Handler {
  const handler = HANDLERS.get(name);
  if (!handler) throw new Error(`operation '${name}' has no handler`);
  return handler;
}
