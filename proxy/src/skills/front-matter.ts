// SKILL.md's YAML front matter, checked as the Agent Skills specification (agentskills.io) gives it:
// `name` (1-64 lowercase letters, digits and hyphens, no hyphen at either end nor two in a row) and
// `description` (1-1024 characters) are required; `compatibility` is at most 500 characters;
// `license` and `allowed-tools` are strings and `metadata` a map of strings when present.
import type * as Yaml from 'yaml';
import { lazy } from '../lazy.ts';
import { GatewayError } from '../unified/errors.ts';

/** The YAML parser, loaded with the first skill read (a gateway without skills never needs it). */
const yaml = lazy<typeof Yaml>('yaml');

export interface SkillMeta {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  /** Every field of the front matter, as parsed (other tools read fields the spec does not name). */
  fields: Record<string, unknown>;
}

export const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SKILL_NAME_RULE = '1 to 64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen';

const invalid = (message: string, param: string) => new GatewayError(400, message, { param, code: 'invalid_skill_md' });

/** A skill name's problem, or undefined when it follows the spec. */
export function skillNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'it must be a non-empty string';
  if (name.length > 64) return `it is ${name.length} characters long, more than 64`;
  if (!SKILL_NAME.test(name)) return `it must be ${SKILL_NAME_RULE}`;
  return undefined;
}

export function readSkillMd(data: Buffer, param: string): SkillMeta {
  const text = data.toString('utf8').replace(/^\uFEFF/, '');
  const m = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text) ?? /^---[ \t]*\r?\n()---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) throw invalid(`SKILL.md must start with YAML front matter between '---' lines (name and description at least)`, param);
  const doc = yaml().parseDocument(m[1], { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) throw invalid(`SKILL.md front matter is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`, param);
  const fields: unknown = doc.toJS({ maxAliasCount: 16 });
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw invalid('SKILL.md front matter must be a YAML mapping (name: ..., description: ...)', param);
  const f = fields as Record<string, unknown>;
  const nameProblem = skillNameProblem(f.name);
  if (nameProblem) throw invalid(`SKILL.md front matter 'name' is not valid: ${nameProblem}`, `${param}.name`);
  if (typeof f.description !== 'string' || f.description.trim() === '') throw invalid("SKILL.md front matter needs a non-empty 'description' string (what the skill does and when to use it)", `${param}.description`);
  if (f.description.length > 1024) throw invalid(`SKILL.md front matter 'description' is ${f.description.length} characters long, more than 1024`, `${param}.description`);
  if (f.compatibility !== undefined && (typeof f.compatibility !== 'string' || f.compatibility.length > 500)) throw invalid("SKILL.md front matter 'compatibility' must be a string of at most 500 characters", `${param}.compatibility`);
  if (f.license !== undefined && typeof f.license !== 'string') throw invalid("SKILL.md front matter 'license' must be a string", `${param}.license`);
  if (f['allowed-tools'] !== undefined && typeof f['allowed-tools'] !== 'string') throw invalid("SKILL.md front matter 'allowed-tools' must be a string (space-separated tools)", `${param}.allowed-tools`);
  if (f.metadata !== undefined && (typeof f.metadata !== 'object' || f.metadata === null || Array.isArray(f.metadata))) throw invalid("SKILL.md front matter 'metadata' must be a mapping", `${param}.metadata`);
  return {
    name: f.name as string,
    description: f.description,
    ...(typeof f.license === 'string' && { license: f.license }),
    ...(typeof f.compatibility === 'string' && { compatibility: f.compatibility }),
    fields: f,
  };
}
