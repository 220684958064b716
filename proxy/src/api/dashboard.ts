// GET /api/dashboard: the facts the dashboard shell draws its pages from (api/dashboard-info.ts).
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import { gatewayInfo } from './dashboard-info.ts';
import type { DashboardFeatures } from './answers.ts';
import type { TicketStore } from './ws-tickets.ts';
import type { RealtimeRegistry } from '../realtime/registry.ts';
import type { PlaygroundDeps } from './playground.ts';
import { managementAuth } from './auth.ts';
import { packageVersion } from './config.ts';
import { reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';

/** What gateway.ts hands the management API for the dashboard. */
export interface DashboardApi {
  /** The WebSocket tickets /ws accepts; absent when the dashboard is off (--no-dashboard). */
  tickets?: TicketStore;
  /** The optional subsystems running on this gateway. */
  features(): DashboardFeatures;
  /** This replica's realtime sessions (GET /api/realtime/sessions). */
  realtime?: RealtimeRegistry;
  /** Runs the playground's requests in process; absent: POST /api/playground answers 503. */
  playground?: PlaygroundDeps;
}

const NONE: DashboardFeatures = { logs: false, cache: false, mcp: false, webhooks: false, async: false, skills: false, audit: false };

export function dashboardRouter(service: ConfigService, dashboard: DashboardApi | undefined): Router {
  const router = Router({ caseSensitive: true });
  const version = packageVersion();
  router
    .route('/')
    .get((_req: Request, res: Response) => {
      reply(
        res,
        200,
        gatewayInfo({ version, origin: service.origin(), authEnabled: managementAuth(service.current().governance.auth).enabled, features: dashboard?.features() ?? NONE, status: service.status() }),
      );
    })
    .all(methodNotAllowed);
  return router;
}
