// Decisions on OpenAI-format providers: OpenAI's Decisions API (/decisions, OpenAI and Fireworks)
// as it is, the System One API (/systemone, Ollama) through the translation in unified/systemone.ts,
// or OpenRouter's alpha variant of it (/alpha/decisions beside /v1, unified/openrouter-decisions.ts).
import type { UpstreamRequest } from '../adapter.ts';
import type { DecisionRequest, DecisionResponse } from '../../unified/decisions.ts';
import { fromSystemOneAnswer, toSystemOne } from '../../unified/systemone.ts';
import { objectList, ShapeError } from '../../unified/answer-shape.ts';
import { fromOpenRouterDecisions, toOpenRouterDecisions } from '../../unified/openrouter-decisions.ts';
import type { DecisionsShape } from '../catalog.ts';
import { toUpstreamBody } from './body.ts';

export function toOpenAIDecisionRequest(req: DecisionRequest, model: string, shape: DecisionsShape): UpstreamRequest {
  if (shape === 'openrouter') return { method: 'POST', path: '/alpha/decisions', unversioned: true, requestType: 'decision', body: toOpenRouterDecisions(req, model), stream: false };
  if (shape === 'systemone') return { method: 'POST', path: '/systemone', requestType: 'decision', body: toSystemOne(req, model), stream: false };
  return { method: 'POST', path: '/decisions', requestType: 'decision', body: toUpstreamBody(req, model), stream: false };
}

export function fromOpenAIDecisionResponse(body: unknown, req: DecisionRequest, shape: DecisionsShape): DecisionResponse {
  if (shape === 'openrouter') return fromOpenRouterDecisions(body, req);
  if (shape === 'systemone') return fromSystemOneAnswer(body, req);
  const answers = objectList(body, 'answers');
  // One answer per question, in order: anything else cannot be matched to the questions asked.
  if (answers.length !== req.questions.length) throw new ShapeError(`${answers.length} answers for ${req.questions.length} questions`);
  return body as DecisionResponse;
}
