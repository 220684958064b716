// Unified OCR: Mistral's /v1/ocr request and answer, the shape every OCR provider is normalised to
// (Mistral is the one first-party document OCR API, and LiteLLM and the Azure and Vertex hostings
// of Mistral OCR follow it). A document is a URL or data URL (`document_url`), an image
// (`image_url`), or a file uploaded to the provider (`file`, by id); `pages` selects pages by
// 0-based index. The answer lists pages with their markdown, images and dimensions; usage is in
// pages (`usage_info.pages_processed`), which is what OCR is priced by.
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ExtraFields } from './chat.ts';

const DocumentUrlSchema = Type.Object(
  { type: Type.Literal('document_url'), document_url: Type.String({ minLength: 1 }), document_name: Type.Optional(Type.Union([Type.String(), Type.Null()])) },
  { additionalProperties: false },
);
const ImageUrlSchema = Type.Object(
  {
    type: Type.Literal('image_url'),
    image_url: Type.Union([Type.String({ minLength: 1 }), Type.Object({ url: Type.String({ minLength: 1 }), detail: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { additionalProperties: false })]),
  },
  { additionalProperties: false },
);
const FileSchema = Type.Object({ type: Type.Literal('file'), file_id: Type.String({ minLength: 1 }) }, { additionalProperties: false });

/** `0-2,5`: indices and inclusive ranges, 0-based. */
export const PAGE_LIST = /^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/;

export const OcrRequestSchema = Type.Object(
  {
    ...GatewayFields,
    document: Type.Union([DocumentUrlSchema, ImageUrlSchema, FileSchema]),
    pages: Type.Optional(Type.Union([Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 }), Type.String({ pattern: PAGE_LIST.source }), Type.Null()])),
    include_image_base64: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    image_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    image_min_size: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  },
  // Mistral's newer options (annotation formats, table format, headers and footers, blocks,
  // confidence scores) go to the provider as given.
  { additionalProperties: true },
);
export type OcrRequest = Static<typeof OcrRequestSchema>;
export type OcrDocument = OcrRequest['document'];

/**
 * For hostings that read a document only inline (they download nothing and have no Files API):
 * the field that is not a `data:` URL, and why it cannot go; undefined when the document is inline.
 */
export function notInline(doc: OcrDocument): { param: string; why: 'file' | 'url' } | undefined {
  if (doc.type === 'file') return { param: 'document.file_id', why: 'file' };
  const url = doc.type === 'document_url' ? doc.document_url : typeof doc.image_url === 'string' ? doc.image_url : doc.image_url.url;
  return url.startsWith('data:') ? undefined : { param: doc.type === 'document_url' ? 'document.document_url' : 'document.image_url', why: 'url' };
}

export interface OcrImage {
  id: string;
  top_left_x: number | null;
  top_left_y: number | null;
  bottom_right_x: number | null;
  bottom_right_y: number | null;
  image_base64?: string | null;
  image_annotation?: string | null;
}

export interface OcrPage {
  index: number;
  markdown: string;
  images: OcrImage[];
  dimensions: { dpi: number; height: number; width: number } | null;
  [more: string]: unknown;
}

export interface OcrResponse {
  pages: OcrPage[];
  model: string;
  document_annotation?: string | null;
  usage_info: { pages_processed: number; doc_size_bytes?: number | null };
  extra_fields?: ExtraFields;
}

