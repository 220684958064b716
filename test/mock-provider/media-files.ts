// Real-looking media bytes for the mock's image and audio endpoints: PNG images (valid files, one
// colour per prompt), speech in each of OpenAI's formats with the spoken text embedded as metadata
// (ID3 title, RIFF INAM, Vorbis-comment TITLE), and reading that text back, so a transcription of
// the mock's own speech returns what was said.
import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

// ---------------------------------------------------------------- images

const pngCache = new Map<string, Buffer>();

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A valid RGB PNG of one colour, chosen by `seed`. */
export function png(width: number, height: number, seed: string): Buffer {
  const rgb = createHash('sha256').update(seed).digest().subarray(0, 3);
  const key = `${width}x${height}:${rgb.toString('hex')}`;
  const cached = pngCache.get(key);
  if (cached) return cached;
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) rgb.copy(row, 1 + x * 3);
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter, no interlace
  const file = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
  pngCache.set(key, file);
  return file;
}

export type ImageKind = 'png' | 'jpeg' | 'webp';

/** The image format of `data` by its magic bytes. */
export function imageKind(data: Buffer): ImageKind | undefined {
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpeg';
  if (data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** Width and height from a PNG's IHDR. */
export function pngSize(data: Buffer): { width: number; height: number } | undefined {
  if (imageKind(data) !== 'png' || data.length < 24) return undefined;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** The requested output image: a PNG, or a stand-in with the right signature for jpeg and webp. */
export function imageFile(kind: ImageKind, width: number, height: number, seed: string): Buffer {
  const image = png(width, height, seed);
  if (kind === 'png') return image;
  if (kind === 'jpeg') return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0', 'latin1'), image.subarray(8), Buffer.from([0xff, 0xd9])]);
  const body = Buffer.concat([Buffer.from('WEBPVP8L', 'latin1'), image.subarray(8)]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(body.length, 0);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), size, body]);
}

// ---------------------------------------------------------------- speech

export type SpeechFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

const SAMPLE_RATE = 24_000;

/** Seconds of speech for `text`: about 15 characters a second, at least half a second. */
export function speechSeconds(text: string, speed = 1): number {
  return Math.max(0.5, text.length / 15 / speed);
}

/** A quiet 220 Hz tone as 16-bit little-endian mono PCM at 24 kHz. */
function tone(seconds: number): Buffer {
  const n = Math.round(seconds * SAMPLE_RATE);
  const pcm = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) pcm.writeInt16LE(Math.round(2000 * Math.sin((2 * Math.PI * 220 * i) / SAMPLE_RATE)), i * 2);
  return pcm;
}

function syncsafe(n: number): Buffer {
  return Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
}

/** ID3v2.4 tag with a UTF-8 TIT2 (title) frame, then MPEG-2 Layer III frames (24 kHz mono, 64 kbit/s). */
function mp3(text: string, seconds: number): Buffer {
  const title = Buffer.concat([Buffer.from([0x03]), Buffer.from(text, 'utf8')]);
  const frame = Buffer.concat([Buffer.from('TIT2', 'latin1'), syncsafe(title.length), Buffer.from([0, 0]), title]);
  const tag = Buffer.concat([Buffer.from('ID3', 'latin1'), Buffer.from([4, 0, 0]), syncsafe(frame.length), frame]);
  const frames = Math.ceil(seconds / 0.024); // 576 samples a frame
  const audio = Buffer.alloc(frames * 192);
  for (let i = 0; i < frames; i++) audio.set([0xff, 0xf3, 0x84, 0xc0], i * 192);
  return Buffer.concat([tag, audio]);
}

function riffChunk(id: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data, data.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

/** RIFF/WAVE, 16-bit mono PCM at 24 kHz, with the text as LIST/INFO INAM. */
function wav(text: string, seconds: number): Buffer {
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0);
  fmt.writeUInt16LE(1, 2);
  fmt.writeUInt32LE(SAMPLE_RATE, 4);
  fmt.writeUInt32LE(SAMPLE_RATE * 2, 8);
  fmt.writeUInt16LE(2, 12);
  fmt.writeUInt16LE(16, 14);
  const info = Buffer.concat([Buffer.from('INFO', 'latin1'), riffChunk('INAM', Buffer.from(`${text}\0`, 'utf8'))]);
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), riffChunk('fmt ', fmt), riffChunk('LIST', info), riffChunk('data', tone(seconds))]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

function vorbisComment(text: string): Buffer {
  const vendor = Buffer.from('mock-provider', 'utf8');
  const comment = Buffer.from(`TITLE=${text}`, 'utf8');
  const out = Buffer.alloc(12 + vendor.length + comment.length);
  out.writeUInt32LE(vendor.length, 0);
  vendor.copy(out, 4);
  out.writeUInt32LE(1, 4 + vendor.length);
  out.writeUInt32LE(comment.length, 8 + vendor.length);
  comment.copy(out, 12 + vendor.length);
  return out;
}

/** fLaC, STREAMINFO and VORBIS_COMMENT metadata blocks, then frame headers over silence. */
function flac(text: string, seconds: number): Buffer {
  const info = Buffer.alloc(34);
  info.writeUInt16BE(4096, 0);
  info.writeUInt16BE(4096, 2);
  const samples = Math.round(seconds * SAMPLE_RATE);
  // 20-bit sample rate, 3-bit channels-1, 5-bit bits-1, 36-bit total samples.
  info.writeUInt32BE(((SAMPLE_RATE << 12) | (0 << 9) | (15 << 4) | Math.floor(samples / 2 ** 32)) >>> 0, 10);
  info.writeUInt32BE(samples >>> 0, 14);
  const block = (type: number, last: boolean, data: Buffer) => Buffer.concat([Buffer.from([(last ? 0x80 : 0) | type, data.length >> 16, (data.length >> 8) & 0xff, data.length & 0xff]), data]);
  const frames = Math.ceil(samples / 4096);
  const audio = Buffer.alloc(frames * 64);
  for (let i = 0; i < frames; i++) audio.set([0xff, 0xf8, 0xc9, 0x08], i * 64);
  return Buffer.concat([Buffer.from('fLaC', 'latin1'), block(0, false, info), block(4, true, vorbisComment(text)), audio]);
}

const OGG_CRC = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

function oggPage(packet: Buffer, seq: number, flags: number, granule: number): Buffer {
  const segments: number[] = [];
  for (let left = packet.length; ; left -= 255) {
    segments.push(Math.min(255, left));
    if (left < 255) break;
  }
  const head = Buffer.alloc(27 + segments.length);
  head.write('OggS', 0, 'latin1');
  head[5] = flags;
  head.writeBigUInt64LE(BigInt(granule), 6);
  head.writeUInt32LE(0x6d6f636b, 14); // stream serial: "mock"
  head.writeUInt32LE(seq, 18);
  head[26] = segments.length;
  head.set(segments, 27);
  const page = Buffer.concat([head, packet]);
  let crc = 0;
  for (const b of page) crc = ((crc << 8) ^ OGG_CRC[((crc >>> 24) ^ b) & 0xff]) >>> 0;
  page.writeUInt32LE(crc, 22);
  return page;
}

/** Ogg Opus: OpusHead, OpusTags with the title, then silent 20 ms packets. */
function opus(text: string, seconds: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1;
  head[9] = 1;
  head.writeUInt16LE(312, 10);
  head.writeUInt32LE(SAMPLE_RATE, 12);
  const tags = Buffer.concat([Buffer.from('OpusTags', 'latin1'), vorbisComment(text)]);
  const packets = Math.ceil(seconds / 0.02);
  const pages = [oggPage(head, 0, 0x02, 0), oggPage(tags, 1, 0, 0)];
  for (let i = 0; i < packets; i++) pages.push(oggPage(Buffer.from([0xf8, 0xff, 0xfe]), i + 2, i === packets - 1 ? 0x04 : 0, (i + 1) * 960));
  return Buffer.concat(pages);
}

/** ADTS AAC-LC frames, 24 kHz mono, with empty payloads. */
function aac(seconds: number): Buffer {
  const frames = Math.ceil((seconds * SAMPLE_RATE) / 1024);
  const len = 16;
  const frame = Buffer.from([0xff, 0xf1, (1 << 6) | (6 << 2), (1 << 6) | (len >> 11), (len >> 3) & 0xff, ((len & 7) << 5) | 0x1f, 0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

export function speechAudio(format: SpeechFormat, text: string, speed = 1): Buffer {
  const seconds = speechSeconds(text, speed);
  switch (format) {
    case 'mp3': return mp3(text, seconds);
    case 'wav': return wav(text, seconds);
    case 'pcm': return tone(seconds);
    case 'flac': return flac(text, seconds);
    case 'opus': return opus(text, seconds);
    case 'aac': return aac(seconds);
  }
}

/** The text the mock embedded in its own speech, if `audio` is such a file. */
export function embeddedSpeechText(audio: Buffer): string | undefined {
  if (audio.toString('latin1', 0, 3) === 'ID3') {
    const at = audio.indexOf('TIT2', 10, 'latin1');
    if (at < 0) return undefined;
    const size = (audio[at + 4] << 21) | (audio[at + 5] << 14) | (audio[at + 6] << 7) | audio[at + 7];
    return audio.toString('utf8', at + 11, at + 10 + size);
  }
  if (audio.toString('latin1', 0, 4) === 'RIFF') {
    const at = audio.indexOf('INAM', 12, 'latin1');
    if (at < 0) return undefined;
    return audio.toString('utf8', at + 8, at + 8 + audio.readUInt32LE(at + 4)).replace(/\0+$/, '');
  }
  const at = audio.indexOf('TITLE=', 0, 'latin1');
  if (at < 0) return undefined;
  // The comment's length (of `TITLE=<text>`) precedes it.
  return audio.toString('utf8', at + 6, at + audio.readUInt32LE(at - 4));
}

/** Splits bytes into pieces of about `size` (at least `min` pieces when long enough), for streaming. */
export function pieces(data: Buffer, min = 4, size = 4096): Buffer[] {
  const step = Math.max(1, Math.min(size, Math.ceil(data.length / min)));
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += step) out.push(data.subarray(i, i + step));
  return out;
}
