import { validated } from '../http/body.ts';
import { nullsAbsent } from '../unified/nulls.ts';
import { EmbeddingRequestSchema, encodeEmbedding, type EmbeddingRequest, type EmbeddingResponse } from '../unified/embeddings.ts';
import { buildBy, readJson, type OperationSpec } from './inference.ts';
import { openaiAdapter } from '../providers/openai/adapter.ts';

const parseEmbedding = nullsAbsent(validated(EmbeddingRequestSchema));

export const embeddingsSpec: OperationSpec<EmbeddingRequest> = {
  read: (ctx) => readJson(ctx, parseEmbedding),
  spec: (emb, ctx) => ({
    requestType: 'embedding',
    modelRequested: emb.model,
    build: buildBy('embeddings', emb, (a, r, model) => a.embeddingsRequest?.(r, model)),
    parse: (body, att) => {
      const out = att.adapter.embeddingsResponse!(body, emb, att.target.model, att.up);
      // Providers that only return floats still honour a base64 request.
      if (emb.encoding_format === 'base64') {
        for (const d of out.data) if (Array.isArray(d.embedding)) d.embedding = encodeEmbedding(d.embedding, 'base64');
      }
      return out;
    },
    usage: (u) => {
      const usage = u as EmbeddingResponse['usage'] | undefined;
      return typeof usage?.prompt_tokens === 'number' ? { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: usage.total_tokens } : undefined;
    },
    passthrough: (att) => ctx.http !== undefined && att.adapter === openaiAdapter,
  }),
};
