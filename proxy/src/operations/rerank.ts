import { validated } from '../http/body.ts';
import { RerankRequestSchema, type RerankRequest } from '../unified/rerank.ts';
import { asUsage } from '../unified/chat.ts';
import { buildBy, readJson, type OperationSpec } from './inference.ts';

const parseRerank = validated(RerankRequestSchema);

export const rerankSpec: OperationSpec<RerankRequest> = {
  read: (ctx) => readJson(ctx, parseRerank),
  spec: (req) => ({
    requestType: 'rerank',
    modelRequested: req.model,
    build: buildBy('rerank', req, (a, r, model) => a.rerankRequest?.(r, model)),
    parse: (body, att) => att.adapter.rerankResponse!(body, req, att.target.model),
    usage: asUsage,
  }),
};
