// multipart/form-data parsing for the mock (RFC 7578), synchronous over the whole buffered body.
// Repeated names become arrays; file parts become UploadedFile, which records as its metadata.

export class UploadedFile {
  readonly filename: string;
  readonly contentType: string;
  readonly data: Buffer;

  constructor(filename: string, contentType: string, data: Buffer) {
    this.filename = filename;
    this.contentType = contentType;
    this.data = data;
  }

  /** Recorded requests (and `GET /_mock/requests`) show the file's metadata, not its bytes. */
  toJSON(): { filename: string; content_type: string; bytes: number } {
    return { filename: this.filename, content_type: this.contentType, bytes: this.data.length };
  }
}

export type FormValue = string | UploadedFile;
export type Form = Record<string, FormValue | FormValue[]>;

export function isMultipart(contentType: string | undefined): boolean {
  return typeof contentType === 'string' && /^multipart\/form-data\b/i.test(contentType);
}

export function isForm(body: unknown): body is Form {
  return typeof body === 'object' && body !== null && Object.getPrototypeOf(body) === FORM_PROTO;
}

// Forms get their own prototype so handlers can tell a parsed form from a JSON object.
const FORM_PROTO = Object.create(null) as object;

/** The parsed form, or undefined when the body is not valid multipart for this boundary. */
export function parseMultipart(raw: Buffer, contentType: string): Form | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  const form = Object.create(FORM_PROTO) as Form;
  let pos = raw.indexOf(delimiter);
  if (pos < 0) return undefined;
  for (;;) {
    pos += delimiter.length;
    if (raw[pos] === 0x2d && raw[pos + 1] === 0x2d) return form; // closing `--boundary--`
    if (raw[pos] === 0x0d && raw[pos + 1] === 0x0a) pos += 2;
    const headEnd = raw.indexOf('\r\n\r\n', pos);
    if (headEnd < 0) return undefined;
    const next = raw.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headEnd + 4);
    if (next < 0) return undefined;
    const headers = parseHeaders(raw.subarray(pos, headEnd).toString('utf8'));
    const disposition = headers['content-disposition'] ?? '';
    const name = param(disposition, 'name');
    if (name === undefined) return undefined;
    const filename = param(disposition, 'filename');
    const content = raw.subarray(headEnd + 4, next);
    const value: FormValue = filename !== undefined
      ? new UploadedFile(filename, headers['content-type'] ?? 'application/octet-stream', Buffer.from(content))
      : content.toString('utf8');
    const prev = form[name];
    form[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    pos = next + 2;
  }
}

function parseHeaders(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return out;
}

function param(header: string, key: string): string | undefined {
  const m = new RegExp(`(?:^|;)\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(header) ?? new RegExp(`(?:^|;)\\s*${key}=([^;]*)`, 'i').exec(header);
  return m ? decodeURIComponent(m[1].replace(/%(?![0-9a-f]{2})/gi, '%25')) : undefined;
}
