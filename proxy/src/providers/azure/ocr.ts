// Document OCR on Azure AI Foundry: Mistral Document AI (`mistral-document-ai-2505`, `-2512`)
// deployed on a Foundry resource answers Mistral's OCR API at `{resource}/providers/mistral/azure/ocr`
// (Mistral's body and answer, the deployment in `model`, the key as `Authorization: Bearer`). It is
// on the resource's Foundry host, beside `/openai` rather than below it (sign.ts places it), and it
// reads documents inline only: no URL download, no Files API.
import type { UpstreamRequest } from '../adapter.ts';
import { notInline, type OcrRequest } from '../../unified/ocr.ts';
import { GatewayError } from '../../unified/errors.ts';

/** The operation's path below the resource's root (not below `/openai`). */
export const FOUNDRY_OCR = '/providers/mistral/azure/ocr';

export function toAzureOcrRequest(req: OcrRequest, model: string): UpstreamRequest {
  const bad = notInline(req.document);
  if (bad) {
    const why = bad.why === 'file' ? 'Foundry has no Files API for it; send the file as a data URL' : 'it does not download URLs';
    throw new GatewayError(400, `Mistral Document AI on Azure AI Foundry reads documents sent inline only: ${bad.param} must be a data: URL (${why})`, {
      param: bad.param,
      code: 'unsupported_document',
      provider: 'azure',
    });
  }
  const { fallbacks: _f, ...body } = req;
  return { method: 'POST', path: FOUNDRY_OCR, requestType: 'ocr', body: { ...body, model }, stream: false };
}

/**
 * The Foundry host of a resource. A Foundry (AI Services) resource answers Azure OpenAI on
 * `<name>.openai.azure.com` and its partner models on `<name>.services.ai.azure.com`: a key whose
 * endpoint is the former reaches OCR on the latter. Any other origin (a Foundry or Cognitive
 * Services host, a custom domain, a proxy) is used as configured.
 */
export function foundryOrigin(origin: string): string {
  const url = new URL(origin);
  const m = /^([a-z0-9-]+)\.openai\.azure\.com$/i.exec(url.hostname);
  if (!m) return origin;
  url.hostname = `${m[1]}.services.ai.azure.com`;
  return url.origin;
}
