// Decisions on OpenAI-format providers: OpenAI's Decisions API (/decisions, OpenAI and Fireworks)
// as it is, or the System One API (/systemone, Ollama) through the translation in unified/systemone.ts.
import type { UpstreamRequest } from '../adapter.ts';
import type { DecisionRequest, DecisionResponse } from '../../unified/decisions.ts';
import { fromSystemOneAnswer, toSystemOne } from '../../unified/systemone.ts';
import { objectList, ShapeError } from '../../unified/answer-shape.ts';
import { toUpstreamBody } from './body.ts';

export function toOpenAIDecisionRequest(req: DecisionRequest, model: string, shape: 'openai' | 'systemone'): UpstreamRequest {
  if (shape === 'systemone') return { method: 'POST', path: '/systemone', requestType: 'decision', body: toSystemOne(req, model), stream: false };
  return { method: 'POST', path: '/decisions', requestType: 'decision', body: toUpstreamBody(req, model), stream: false };
}

export function fromOpenAIDecisionResponse(body: unknown, req: DecisionRequest, shape: 'openai' | 'systemone'): DecisionResponse {
  if (shape === 'systemone') return fromSystemOneAnswer(body, req);
  const answers = objectList(body, 'answers');
  // One answer per question, in order: anything else cannot be matched to the questions asked.
  if (answers.length !== req.questions.length) throw new ShapeError(`${answers.length} answers for ${req.questions.length} questions`);
  return body as DecisionResponse;
}
