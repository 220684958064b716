// GET /api/realtime/sessions: this replica's open realtime sessions and the last ones that ended
// (realtime/registry.ts), scoped like the request logs they end up in. Sessions are per replica,
// as the dashboard's live events are; an ended session's record in the logs is shared.
import { Router, type Request, type Response } from 'express';
import type { RealtimeRegistry } from '../realtime/registry.ts';
import type { RealtimeSessionsAnswer } from './answers.ts';
import { reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';

export function realtimeRouter(registry: RealtimeRegistry | undefined): Router {
  const router = Router({ caseSensitive: true });
  router
    .route('/sessions')
    .get((_req: Request, res: Response) => {
      const answer: RealtimeSessionsAnswer = registry?.list() ?? { open: [], ended: [] };
      reply(res, 200, answer);
    })
    .all(methodNotAllowed);
  return router;
}
