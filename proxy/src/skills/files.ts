// A skill's files as a client sends them, checked once: paths normalised and kept inside the skill,
// contents decoded, limits applied, and SKILL.md's front matter read (skills/front-matter.ts).
// Pure: the store, /api/skills and /v1/skills all call it, and a refusal stores nothing.
import { GatewayError } from '../unified/errors.ts';
import { readSkillMd, type SkillMeta } from './front-matter.ts';

/** One file of a skill: its normalised path and its bytes. */
export interface SkillFile {
  path: string;
  data: Buffer;
}

export interface SkillLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

export const DEFAULT_LIMITS: SkillLimits = { maxFiles: 256, maxFileBytes: 1024 * 1024, maxTotalBytes: 4 * 1024 * 1024 };

export const SKILL_MD = 'SKILL.md';
const MAX_PATH = 512;

const invalid = (message: string, param: string) => new GatewayError(400, message, { param, code: 'invalid_field' });
const tooLarge = (message: string, param: string) => new GatewayError(413, message, { type: 'invalid_request_error', param, code: 'skill_too_large' });

/**
 * A relative path inside the skill, normalised (`./a//b` → `a/b`), or a 400 naming the field: no
 * absolute path, drive letter, backslash, NUL or other control character, and no `..` segment, so
 * no file can land outside the skill's directory where an agent unpacks it.
 */
export function normalisePath(raw: unknown, param: string): string {
  if (typeof raw !== 'string' || raw.length === 0) throw invalid(`${param} must be a non-empty string`, param);
  if (raw.length > MAX_PATH) throw invalid(`${param} is longer than ${MAX_PATH} characters`, param);
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw invalid(`${param} contains a control character (NUL included)`, param);
  if (raw.includes('\\')) throw invalid(`${param} contains a backslash: use '/' between directories`, param);
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) throw invalid(`${param} '${raw}' is absolute: paths are relative to the skill's directory`, param);
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw invalid(`${param} '${raw}' contains '..': a path cannot leave the skill's directory`, param);
  if (segments.length === 0) throw invalid(`${param} '${raw}' names no file`, param);
  return segments.join('/');
}

/** A file as JSON carries it: `content` as UTF-8 text, or base64 with `encoding: "base64"`. */
export interface FileInput {
  path?: unknown;
  content?: unknown;
  encoding?: unknown;
}

function decode(f: FileInput, param: string): Buffer {
  if (typeof f.content !== 'string') throw invalid(`${param}.content must be a string (UTF-8 text, or base64 with encoding "base64")`, `${param}.content`);
  const encoding = f.encoding ?? 'utf8';
  if (encoding === 'utf8' || encoding === 'utf-8' || encoding === 'text') return Buffer.from(f.content, 'utf8');
  if (encoding !== 'base64') throw invalid(`${param}.encoding must be "utf8" or "base64"`, `${param}.encoding`);
  const text = f.content.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw invalid(`${param}.content is not valid base64`, `${param}.content`);
  return Buffer.from(text, 'base64');
}

/** JSON `files` (an array of {path, content, encoding?}) decoded, each path normalised; limits apply after (checkSkill). */
export function filesFromJson(files: unknown, limits: SkillLimits, field = 'files'): SkillFile[] {
  if (!Array.isArray(files)) throw invalid(`${field} must be an array of {path, content, encoding?}`, field);
  if (files.length > limits.maxFiles) throw tooLarge(`${field} has ${files.length} files, more than the ${limits.maxFiles} a skill may hold`, field);
  return files.map((f: unknown, i) => {
    const param = `${field}[${i}]`;
    if (typeof f !== 'object' || f === null || Array.isArray(f)) throw invalid(`${param} must be an object {path, content, encoding?}`, param);
    const input = f as FileInput;
    return { path: normalisePath(input.path, `${param}.path`), data: decode(input, param) };
  });
}

/** A skill's files checked as a whole: limits, no duplicate path, SKILL.md at the root with valid front matter. */
export function checkSkill(files: readonly SkillFile[], limits: SkillLimits, field = 'files'): { files: SkillFile[]; meta: SkillMeta } {
  if (files.length > limits.maxFiles) throw tooLarge(`${field} has ${files.length} files, more than the ${limits.maxFiles} a skill may hold`, field);
  const seen = new Map<string, number>();
  let total = 0;
  files.forEach((f, i) => {
    const param = `${field}[${i}]`;
    const prev = seen.get(f.path);
    if (prev !== undefined) throw invalid(`${param}.path '${f.path}' is the same file as ${field}[${prev}].path once normalised`, `${param}.path`);
    // A file and a directory of the same name cannot both be unpacked.
    for (const p of seen.keys()) {
      if (p.startsWith(`${f.path}/`) || f.path.startsWith(`${p}/`)) throw invalid(`${param}.path '${f.path}' and '${p}' cannot both exist: one is a directory of the other`, `${param}.path`);
    }
    seen.set(f.path, i);
    if (f.data.length > limits.maxFileBytes) throw tooLarge(`${param}.content is ${f.data.length} bytes, more than the ${limits.maxFileBytes} a file may hold`, `${param}.content`);
    total += f.data.length;
  });
  if (total > limits.maxTotalBytes) throw tooLarge(`${field} total ${total} bytes, more than the ${limits.maxTotalBytes} a skill may hold`, field);
  const index = seen.get(SKILL_MD);
  if (index === undefined) throw invalid(`${field} has no ${SKILL_MD} at the skill's root: a skill is a directory with a ${SKILL_MD} whose YAML front matter names it`, field);
  const meta = readSkillMd(files[index].data, `${field}[${index}].content`);
  // SKILL.md first, then by path: every answer and archive lists a skill's files in one order.
  const sorted = [...files].sort((a, b) => (a.path === SKILL_MD ? -1 : b.path === SKILL_MD ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files: sorted, meta };
}

/** A file's content for JSON: text when it is valid UTF-8 without NUL, else base64. */
export function fileJson(f: SkillFile): { path: string; size: number; encoding: 'utf8' | 'base64'; content: string } {
  const text = f.data.toString('utf8');
  const isText = !text.includes('\u0000') && Buffer.from(text, 'utf8').equals(f.data);
  return { path: f.path, size: f.data.length, encoding: isText ? 'utf8' : 'base64', content: isText ? text : f.data.toString('base64') };
}
