import type { Routes } from './http/server.ts';
import { chatCompletions } from './endpoints/chat.ts';
import { textCompletions } from './endpoints/completions.ts';
import { embeddings } from './endpoints/embeddings.ts';
import { listModels } from './endpoints/models.ts';
import { health, metrics } from './endpoints/health.ts';
import { responses } from './endpoints/responses.ts';

export const ROUTES: Routes = {
  '/v1/chat/completions': { POST: chatCompletions },
  '/v1/completions': { POST: textCompletions },
  '/v1/responses': { POST: responses },
  '/v1/embeddings': { POST: embeddings },
  '/v1/models': { GET: listModels },
  '/health': { GET: health },
  '/metrics': { GET: metrics },
};
