// ZIP archives (PKWARE APPNOTE), the small part skills need: writing one (stored or deflated
// entries, no ZIP64: a skill is at most a few MiB) and reading an uploaded one with every size
// bounded before it is inflated, so a small archive cannot expand past the skill limits.
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { GatewayError } from '../unified/errors.ts';
import type { SkillFile, SkillLimits } from './files.ts';

export interface ZipEntry {
  path: string;
  data: Buffer;
}

/** MS-DOS date and time fields for a moment (UTC; the format has no zone), 1980 at the earliest. */
function dosTime(ms: number): { time: number; date: number } {
  const d = new Date(Math.max(ms, Date.UTC(1980, 0, 1)));
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1),
    date: ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

/** The archive's bytes; every entry gets the same modification time, so one content is one archive. */
export function writeZip(entries: readonly ZipEntry[], modified: number): Buffer {
  const { time, date } = dosTime(modified);
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.path, 'utf8');
    const deflated = deflateRawSync(e.data);
    const stored = deflated.length >= e.data.length;
    const body = stored ? e.data : deflated;
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(stored ? 0 : 8, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, body);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(0x031e, 4); // made by: Unix, 3.0 (so the mode below is read)
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x0800, 8);
    c.writeUInt16LE(stored ? 0 : 8, 10);
    c.writeUInt16LE(time, 12);
    c.writeUInt16LE(date, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(body.length, 20);
    c.writeUInt32LE(e.data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE((0o100644 << 16) >>> 0, 38); // a regular file, rw-r--r--
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length + body.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const bad = (message: string) => new GatewayError(400, `archive is not a ZIP archive this gateway reads: ${message}`, { param: 'archive', code: 'invalid_archive' });
const tooLarge = (message: string) => new GatewayError(413, message, { type: 'invalid_request_error', param: 'archive', code: 'skill_too_large' });

/**
 * The files of an uploaded archive (directories skipped). Entry names are returned as they are:
 * the caller normalises them like any other path. Sizes are checked against the limits from the
 * central directory before inflating, and inflating is capped at the declared size.
 */
export function readZip(zip: Buffer, limits: SkillLimits): ZipEntry[] {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw bad('no end of central directory record');
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  if (count > limits.maxFiles * 2 + 16) throw tooLarge(`archive has ${count} entries, more than the ${limits.maxFiles} files a skill may hold`);
  const out: ZipEntry[] = [];
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > zip.length || zip.readUInt32LE(p) !== 0x02014b50) throw bad(`central directory entry ${i} is damaged`);
    const flags = zip.readUInt16LE(p + 8);
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    const compressed = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const path = zip.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    p += 46 + nameLen + extraLen + commentLen;
    if (path.endsWith('/')) continue;
    if (flags & 0x1) throw bad(`entry '${path}' is encrypted`);
    if (size === 0xffffffff || compressed === 0xffffffff) throw bad(`entry '${path}' is ZIP64`);
    if (size > limits.maxFileBytes) throw tooLarge(`archive entry '${path}' is ${size} bytes, more than the ${limits.maxFileBytes} a file may hold`);
    total += size;
    if (total > limits.maxTotalBytes) throw tooLarge(`archive holds more than the ${limits.maxTotalBytes} bytes a skill may hold`);
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== 0x04034b50) throw bad(`entry '${path}' has no local header`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const body = zip.subarray(start, start + compressed);
    if (body.length !== compressed) throw bad(`entry '${path}' is cut short`);
    let data: Buffer;
    try {
      if (method === 0) data = Buffer.from(body);
      else if (method === 8) data = inflateRawSync(body, { maxOutputLength: Math.max(size, 1) });
      else throw bad(`entry '${path}' uses compression method ${method} (stored and deflate are read)`);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw bad(`entry '${path}' does not inflate: ${(err as Error).message}`);
    }
    if (data.length !== size || crc32(data) !== crc) throw bad(`entry '${path}' does not match its size or CRC`);
    out.push({ path, data });
  }
  return out;
}

/**
 * Archives made of a skill's directory hold `<dir>/SKILL.md`, not `SKILL.md`: when every file sits
 * under one top directory and SKILL.md is in it, that directory is dropped.
 */
export function stripTopDirectory(files: readonly SkillFile[]): SkillFile[] {
  if (files.some((f) => f.path === 'SKILL.md')) return [...files];
  const top = files[0]?.path.split('/')[0];
  if (!top || !files.every((f) => f.path.startsWith(`${top}/`)) || !files.some((f) => f.path === `${top}/SKILL.md`)) return [...files];
  return files.map((f) => ({ path: f.path.slice(top.length + 1), data: f.data }));
}
