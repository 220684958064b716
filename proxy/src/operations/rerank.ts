import { validated } from '../http/body.ts';
import { RerankRequestSchema, type RerankRequest } from '../unified/rerank.ts';
import { asUsage } from '../unified/chat.ts';
import { requireOperation, unsupportedOperation } from '../unified/errors.ts';
import { httpInference, readJson, type InferenceRoute } from './inference.ts';

const parseRerank = validated(RerankRequestSchema);

export const rerankRoute: InferenceRoute<RerankRequest> = {
  operation: 'rerank',
  requestType: 'rerank',
  read: (ctx) => readJson(ctx, parseRerank),
  spec: (req) => ({
    requestType: 'rerank',
    modelRequested: req.model,
    build: (t, adapter) => {
      requireOperation(t.provider, 'rerank');
      if (!adapter.rerankRequest) throw unsupportedOperation(t.provider.name, 'rerank');
      return adapter.rerankRequest(req, t.model);
    },
    parse: (body, att) => att.adapter.rerankResponse!(body, req, att.target.model),
    usage: asUsage,
  }),
};

export const rerank = httpInference(rerankRoute);
