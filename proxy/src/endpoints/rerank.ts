import type { Exchange } from '../http/exchange.ts';
import { validated } from '../http/body.ts';
import { RerankRequestSchema, type RerankResponse } from '../unified/rerank.ts';
import { asUsage } from '../unified/chat.ts';
import { requireOperation, unsupportedOperation } from '../unified/errors.ts';
import { acceptRequest, runInference } from './inference.ts';

const parseRerank = validated(RerankRequestSchema);

export async function rerank(ex: Exchange): Promise<void> {
  const accepted = await acceptRequest(ex, parseRerank, 'rerank', 'rerank');
  if (!accepted) return;
  const { req, targets } = accepted;
  await runInference<RerankResponse, never>(ex, {
    operation: 'rerank',
    requestType: 'rerank',
    modelRequested: req.model,
    targets,
    build: (t, adapter) => {
      requireOperation(t.provider, 'rerank');
      if (!adapter.rerankRequest) throw unsupportedOperation(t.provider.name, 'rerank');
      return adapter.rerankRequest(req, t.model);
    },
    parse: (body, att) => att.adapter.rerankResponse!(body, req, att.target.model),
    usage: asUsage,
  });
}
