// Every /api write goes through ConfigService.update: the change runs on a copy of the latest
// document, so a check that throws (404, 409, 400) or a document that fails validation leaves the
// live configuration exactly as it was.
import { SeedManagedError, type ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { Governance } from '../schema/governance.ts';
import { ConfigError, conflict, fromConfigError, type PathAlias } from './errors.ts';

export class WriteContext {
  readonly aliases: PathAlias[] = [];
  /** Errors under `docPath` are reported as under `bodyPath` of the request body. */
  alias(docPath: string, bodyPath: string): void {
    this.aliases.push([docPath, bodyPath]);
  }
}

/** Runs `change` inside service.update and returns what it returned. */
export async function write<T>(service: ConfigService, what: string, change: (draft: GatewayConfig, ctx: WriteContext) => T): Promise<T> {
  let result!: T;
  let ctx = new WriteContext();
  try {
    await service.update((draft) => {
      // update() may run the change again on a newer revision: start from a clean context.
      ctx = new WriteContext();
      result = change(draft, ctx);
    });
  } catch (err) {
    if (err instanceof ConfigError) throw fromConfigError(err, what, ctx.aliases);
    // A change that reached an object of config.json (a cascade, a shared record): refused whole.
    if (err instanceof SeedManagedError) throw conflict(err.message);
    throw err;
  }
  return result;
}

/** The governance section of a draft, created when absent. */
export function governanceOf(draft: GatewayConfig): Governance {
  draft.governance ??= {};
  return draft.governance;
}
