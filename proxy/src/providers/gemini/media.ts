// Unified media references (data: URLs, http(s) URLs, file ids) → Gemini inlineData / fileData parts.
import type { GeminiPart } from './types.ts';

const MIME_BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  webm: 'video/webm',
};

/** MIME type from a URL's or filename's extension (query and fragment ignored). */
export function guessMimeType(nameOrUrl: string): string | undefined {
  const path = nameOrUrl.split(/[?#]/, 1)[0];
  const dot = path.lastIndexOf('.');
  if (dot < 0 || dot < path.lastIndexOf('/')) return undefined;
  return MIME_BY_EXTENSION[path.slice(dot + 1).toLowerCase()];
}

/** `data:<mime>[;params][;base64],<payload>` → mime and base64 payload; undefined if not a data URL. */
export function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) return undefined;
  const mimeType = match[1] || 'text/plain';
  const isBase64 = match[2].split(';').includes('base64');
  // Gemini wants base64; percent-encoded data URLs are re-encoded.
  const data = isBase64 ? match[3] : Buffer.from(decodeURIComponent(match[3]), 'utf8').toString('base64');
  return { mimeType, data };
}

/** An image_url: data URLs are sent inline, anything else by reference. */
export function imagePart(url: string): GeminiPart {
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: inline };
  return { fileData: { mimeType: guessMimeType(url) ?? 'image/jpeg', fileUri: url } };
}

const AUDIO_MIME: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };

export function audioPart(data: string, format: string): GeminiPart {
  return { inlineData: { mimeType: AUDIO_MIME[format] ?? `audio/${format}`, data } };
}

/** OpenAI `file` part: inline data (data URL or bare base64) or a previously uploaded file URI. */
export function filePart(file: { file_data?: string; file_id?: string; filename?: string }): GeminiPart | undefined {
  const guessed = file.filename ? guessMimeType(file.filename) : undefined;
  if (file.file_data) {
    const inline = parseDataUrl(file.file_data);
    if (inline) return { inlineData: inline };
    return { inlineData: { mimeType: guessed ?? 'application/pdf', data: file.file_data } };
  }
  if (file.file_id) {
    return { fileData: guessed ? { mimeType: guessed, fileUri: file.file_id } : { fileUri: file.file_id } };
  }
  return undefined;
}
