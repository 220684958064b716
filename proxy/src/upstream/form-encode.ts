// Encodes form parts as a multipart/form-data body, synchronously: an upstream request is built
// per target inside the retry and fallback loop, and only the model part differs between targets.
import { randomBytes } from 'node:crypto';
import { isFile, type FormPart } from '../unified/form.ts';

export function encodeMultipart(parts: readonly FormPart[], boundary = `----skybridge${randomBytes(12).toString('hex')}`): { bytes: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\ncontent-disposition: form-data; name="${escapeName(p.name)}"`;
    if (isFile(p)) head += `; filename="${escapeName(p.filename)}"\r\ncontent-type: ${p.contentType || 'application/octet-stream'}`;
    chunks.push(Buffer.from(`${head}\r\n\r\n`), isFile(p) ? p.data : Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { bytes: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

// As browsers encode FormData names (WHATWG): quotes and line breaks percent-encoded.
function escapeName(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
