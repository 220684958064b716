// Document OCR on Vertex AI: Mistral's OCR model as a partner model, Mistral's request and answer
// behind `publishers/mistralai/models/{model}:rawPredict`. Vertex reads documents only inline (it
// does not download URLs) and has no Mistral Files API: a document must be a data URL.
import type { UpstreamRequest } from '../adapter.ts';
import type { OcrRequest } from '../../unified/ocr.ts';
import { GatewayError } from '../../unified/errors.ts';
import { publisherModelPath } from './paths.ts';

function inlineOnly(param: string, what: string): GatewayError {
  return new GatewayError(400, `Vertex AI OCR reads documents sent inline only: ${param} must be a data: URL (${what})`, { param, code: 'unsupported_document', provider: 'vertex' });
}

export function toVertexOcrRequest(req: OcrRequest, model: string): UpstreamRequest {
  const doc = req.document;
  if (doc.type === 'file') throw inlineOnly('document.file_id', 'Vertex has no Files API; send the file as a data URL');
  const url = doc.type === 'document_url' ? doc.document_url : typeof doc.image_url === 'string' ? doc.image_url : doc.image_url.url;
  if (!url.startsWith('data:')) throw inlineOnly(doc.type === 'document_url' ? 'document.document_url' : 'document.image_url', 'it does not download URLs');
  const { fallbacks: _f, ...body } = req;
  return { method: 'POST', path: publisherModelPath('mistralai', model, 'rawPredict'), requestType: 'ocr', body: { ...body, model }, stream: false };
}
