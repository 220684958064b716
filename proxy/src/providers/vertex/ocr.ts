// Document OCR on Vertex AI: Mistral's OCR model as a partner model, Mistral's request and answer
// behind `publishers/mistralai/models/{model}:rawPredict`. Vertex reads documents only inline (it
// does not download URLs) and has no Mistral Files API: a document must be a data URL.
import type { UpstreamRequest } from '../adapter.ts';
import { notInline, type OcrRequest } from '../../unified/ocr.ts';
import { GatewayError } from '../../unified/errors.ts';
import { publisherModelPath } from './paths.ts';

function inlineOnly(param: string, what: string): GatewayError {
  return new GatewayError(400, `Vertex AI OCR reads documents sent inline only: ${param} must be a data: URL (${what})`, { param, code: 'unsupported_document', provider: 'vertex' });
}

export function toVertexOcrRequest(req: OcrRequest, model: string): UpstreamRequest {
  const bad = notInline(req.document);
  if (bad) throw inlineOnly(bad.param, bad.why === 'file' ? 'Vertex has no Files API; send the file as a data URL' : 'it does not download URLs');
  const { fallbacks: _f, ...body } = req;
  return { method: 'POST', path: publisherModelPath('mistralai', model, 'rawPredict'), requestType: 'ocr', body: { ...body, model }, stream: false };
}
