// POST /v1/decisions (OpenAI's Decisions shape) and POST /v1/systemone (the System One shape), one
// operation in two client shapes, on providers that declare the `decisions` capability. Each
// provider speaks one shape (providers/catalog.ts `decisionsShape`: OpenAI's, System One's or
// OpenRouter's variant of System One); the adapter
// translates where the client's shape and the provider's differ (unified/systemone.ts). Priced per
// token: the answer's input and output tokens.
import { validated } from '../http/body.ts';
import { checkQuestions, decisionUsage, DecisionRequestSchema, type DecisionRequest, type DecisionResponse } from '../unified/decisions.ts';
import { SystemOneRequestSchema, systemOneToUnified, toSystemOneAnswer } from '../unified/systemone.ts';
import { requireOperation, unsupportedOperation } from '../unified/errors.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import type { Target } from '../pipeline/target.ts';
import type { DecisionsShape } from '../providers/catalog.ts';
import type { Attempted } from '../pipeline/invoke.ts';
import type { InferenceSpec } from './inference.ts';
import { readJson, type OperationSpec } from './inference.ts';

const parseDecision = validated(DecisionRequestSchema);
const parseSystemOne = validated(SystemOneRequestSchema);

const shapeOf = (t: Target): DecisionsShape => t.provider.kind.decisionsShape ?? 'openai';

function build(req: DecisionRequest): (t: Target, adapter: FormatAdapter) => UpstreamRequest {
  return (t, adapter) => {
    requireOperation(t.provider, 'decisions');
    if (!adapter.decisionRequest) throw unsupportedOperation(t.provider.name, 'decisions');
    return adapter.decisionRequest(req, t.model, shapeOf(t));
  };
}

function unifiedAnswer(body: unknown, att: Attempted, req: DecisionRequest): DecisionResponse {
  return att.adapter.decisionResponse!(body, req, shapeOf(att.target));
}

export const decisionsSpec: OperationSpec<DecisionRequest> = {
  read: async (ctx) => {
    const req = await readJson(ctx, parseDecision);
    checkQuestions(req.questions);
    return req;
  },
  spec: (req, ctx): InferenceSpec<DecisionResponse, unknown> => ({
    requestType: 'decision',
    modelRequested: req.model,
    build: build(req),
    parse: (body, att) => unifiedAnswer(body, att, req),
    usage: decisionUsage,
    // An OpenAI-shape provider's checked answer goes as received over HTTP, extra_fields spliced in.
    passthrough: (att) => ctx.http !== undefined && shapeOf(att.target) === 'openai',
  }),
};

/** Read into the unified request (its question names are the System One map's keys), answered back in System One's shape. */
export const systemOneSpec: OperationSpec<DecisionRequest> = {
  read: async (ctx) => {
    const req = systemOneToUnified(await readJson(ctx, parseSystemOne));
    checkQuestions(req.questions);
    return req;
  },
  spec: (req): InferenceSpec<object, unknown> => ({
    requestType: 'decision',
    modelRequested: req.model,
    build: build(req),
    parse: (body, att) => toSystemOneAnswer(unifiedAnswer(body, att, req), req),
    usage: decisionUsage,
  }),
};
