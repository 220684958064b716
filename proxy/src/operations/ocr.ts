// POST /v1/ocr: document OCR (a PDF or an image, by URL, data URL or uploaded file id, with a page
// selection) on providers that declare the `ocr` capability (Mistral). The answer is Mistral's
// shape, the unified one (unified/ocr.ts); its usage is the pages processed, priced per page.
import { validated } from '../http/body.ts';
import { OcrRequestSchema, type OcrRequest, type OcrResponse } from '../unified/ocr.ts';
import { answerObject, isObject, objectList, ShapeError } from '../unified/answer-shape.ts';
import type { Usage } from '../unified/chat.ts';
import { buildBy, readJson, type OperationSpec } from './inference.ts';

const parseOcr = validated(OcrRequestSchema);

/** Checks the fields clients index into: each page's index and markdown, and the page count. */
export function ocrAnswer(body: unknown): OcrResponse {
  objectList(body, 'pages').forEach((p, i) => {
    if (typeof p.markdown !== 'string') throw new ShapeError(`'pages[${i}].markdown' is not a string`);
    if (typeof p.index !== 'number') throw new ShapeError(`'pages[${i}].index' is not a number`);
  });
  const info = answerObject(body).usage_info;
  if (!isObject(info) || typeof info.pages_processed !== 'number') throw new ShapeError(`'usage_info.pages_processed' is not a number`);
  return body as OcrResponse;
}

/** OCR reports no tokens: its usage is the pages processed (priced per page, governance/cost.ts). */
export function ocrUsage(info: unknown): Usage | undefined {
  const pages = isObject(info) && typeof info.pages_processed === 'number' && info.pages_processed >= 0 ? info.pages_processed : undefined;
  return pages === undefined ? undefined : { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, pages };
}

export const ocrSpec: OperationSpec<OcrRequest> = {
  read: (ctx) => readJson(ctx, parseOcr),
  spec: (req, ctx) => ({
    requestType: 'ocr',
    modelRequested: req.model,
    build: buildBy('ocr', req, (adapter, r, model) => adapter.ocrRequest?.(r, model)),
    parse: (body) => ocrAnswer(body),
    usage: () => undefined,
    answerUsage: (answer) => ocrUsage(isObject(answer) ? answer.usage_info : undefined),
    // Mistral's answer is the unified shape: over HTTP it goes as received, extra_fields spliced in.
    passthrough: () => ctx.http !== undefined,
  }),
};
