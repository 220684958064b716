import { validated } from '../http/body.ts';
import { RerankRequestSchema, type RerankRequest } from '../unified/rerank.ts';
import { asUsage } from '../unified/chat.ts';
import { requireOperation, unsupportedOperation } from '../unified/errors.ts';
import { readJson, type OperationSpec } from './inference.ts';

const parseRerank = validated(RerankRequestSchema);

export const rerankSpec: OperationSpec<RerankRequest> = {
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
