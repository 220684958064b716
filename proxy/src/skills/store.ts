// The skills repository over the logs store's SqlDriver (logs migration 8): the same SQL on SQLite
// and PostgreSQL, so replicas sharing a PostgreSQL store serve the same skills. Every write is one
// statement; a refused write (validation happens before, in skills/files.ts) changes nothing.
import { createHash } from 'node:crypto';
import type { Row, SqlDriver } from '../logs/driver.ts';
import { GatewayError } from '../unified/errors.ts';
import type { SkillFile } from './files.ts';
import type { SkillMeta } from './front-matter.ts';
import { compareSemver, isSemver } from './semver.ts';

export interface VersionInfo {
  version: string;
  description: string;
  size: number;
  file_count: number;
  /** sha256 of the version's files (path and bytes, in order): the same content has the same digest everywhere. */
  digest: string;
  created_at: number;
}

export interface SkillRecord {
  name: string;
  description: string;
  default_version: string | undefined;
  created_at: number;
  updated_at: number;
  draft_size: number;
  /** Published versions, oldest first by precedence (deleted ones left out). */
  versions: VersionInfo[];
}

export interface PublishedSkill {
  name: string;
  version: VersionInfo;
  files: SkillFile[];
}

const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const notFound = (what: string) => new GatewayError(404, `${what} not found`, { type: 'not_found_error', code: 'skill_not_found' });
const conflict = (message: string, code: string) => new GatewayError(409, message, { type: 'invalid_request_error', code });

function encodeFiles(files: readonly SkillFile[]): string {
  return JSON.stringify(files.map((f) => [f.path, f.data.toString('base64')]));
}

function decodeFiles(text: unknown): SkillFile[] {
  const rows = JSON.parse(String(text)) as [string, string][];
  return rows.map(([path, b64]) => ({ path, data: Buffer.from(b64, 'base64') }));
}

export function digestOf(files: readonly SkillFile[]): string {
  const h = createHash('sha256');
  for (const f of files) {
    h.update(`${f.path}\0${f.data.length}\0`);
    h.update(f.data);
  }
  return h.digest('hex');
}

const sizeOf = (files: readonly SkillFile[]) => files.reduce((s, f) => s + f.data.length, 0);

function versionInfo(r: Row): VersionInfo {
  return {
    version: String(r.version),
    description: String(r.description),
    size: n(r.size),
    file_count: n(r.file_count),
    digest: String(r.digest),
    created_at: n(r.created_at),
  };
}

const byPrecedence = (a: VersionInfo, b: VersionInfo) => compareSemver(a.version, b.version);

/** The version a client gets when it names none: the default when one is set, else the highest. */
export function currentVersion(s: Pick<SkillRecord, 'default_version' | 'versions'>): VersionInfo | undefined {
  return (s.default_version !== undefined ? s.versions.find((v) => v.version === s.default_version) : undefined) ?? s.versions.at(-1);
}

export class SkillStore {
  readonly #db: SqlDriver;

  constructor(db: SqlDriver) {
    this.#db = db;
  }

  async list(): Promise<SkillRecord[]> {
    const [skills, versions] = await Promise.all([
      this.#db.query('SELECT name, description, default_version, created_at, updated_at, draft_size FROM skills ORDER BY name'),
      this.#db.query('SELECT skill, version, description, size, file_count, digest, created_at FROM skill_versions WHERE deleted_at IS NULL'),
    ]);
    const bySkill = new Map<string, VersionInfo[]>();
    for (const v of versions) {
      const list = bySkill.get(String(v.skill)) ?? [];
      list.push(versionInfo(v));
      bySkill.set(String(v.skill), list);
    }
    return skills.map((r) => this.#record(r, bySkill.get(String(r.name)) ?? []));
  }

  #record(r: Row, versions: VersionInfo[]): SkillRecord {
    return {
      name: String(r.name),
      description: String(r.description),
      default_version: r.default_version === null || r.default_version === undefined ? undefined : String(r.default_version),
      created_at: n(r.created_at),
      updated_at: n(r.updated_at),
      draft_size: n(r.draft_size),
      versions: versions.sort(byPrecedence),
    };
  }

  async get(name: string): Promise<SkillRecord | undefined> {
    const rows = await this.#db.query('SELECT name, description, default_version, created_at, updated_at, draft_size FROM skills WHERE name = ?', [name]);
    if (rows.length === 0) return undefined;
    const versions = await this.#db.query('SELECT version, description, size, file_count, digest, created_at FROM skill_versions WHERE skill = ? AND deleted_at IS NULL', [name]);
    return this.#record(rows[0], versions.map(versionInfo));
  }

  async require(name: string): Promise<SkillRecord> {
    const s = await this.get(name);
    if (!s) throw notFound(`skill '${name}'`);
    return s;
  }

  async draft(name: string): Promise<SkillFile[]> {
    const rows = await this.#db.query('SELECT draft FROM skills WHERE name = ?', [name]);
    if (rows.length === 0) throw notFound(`skill '${name}'`);
    return decodeFiles(rows[0].draft);
  }

  /** A new skill whose draft is `files`; 409 when the name is taken. */
  async create(meta: SkillMeta, files: readonly SkillFile[], now = Date.now()): Promise<SkillRecord> {
    const changed = await this.#db.execute(
      'INSERT INTO skills (name, description, draft, draft_size, default_version, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, ?, ?) ON CONFLICT (name) DO NOTHING',
      [meta.name, meta.description, encodeFiles(files), sizeOf(files), now, now],
    );
    if (changed !== 1) throw conflict(`skill '${meta.name}' already exists: edit its draft (PUT /api/skills/${meta.name}/draft) or delete it first`, 'skill_exists');
    return this.require(meta.name);
  }

  /** Replaces the draft; the front matter's name must be the skill's (the directory an agent unpacks it to). */
  async saveDraft(name: string, meta: SkillMeta, files: readonly SkillFile[], now = Date.now()): Promise<SkillRecord> {
    if (meta.name !== name) {
      throw new GatewayError(400, `SKILL.md names the skill '${meta.name}', but this is skill '${name}': a skill's name cannot change (create a new skill instead)`, { param: 'files', code: 'invalid_skill_md' });
    }
    const changed = await this.#db.execute('UPDATE skills SET description = ?, draft = ?, draft_size = ?, updated_at = ? WHERE name = ?', [meta.description, encodeFiles(files), sizeOf(files), now, name]);
    if (changed !== 1) throw notFound(`skill '${name}'`);
    return this.require(name);
  }

  /**
   * Publishes the draft as `version`: immutable from then on. The version must be SemVer and
   * greater than every version published before (deleted ones included), so "latest" only moves
   * forward and a number is never reused; two replicas publishing the same number at once both
   * reach the primary key, and one gets the 409.
   */
  async publish(name: string, version: string, opts: { makeDefault?: boolean } = {}, now = Date.now()): Promise<VersionInfo> {
    if (!isSemver(version)) throw new GatewayError(400, `version '${String(version).slice(0, 140)}' is not a SemVer version (MAJOR.MINOR.PATCH, e.g. 1.0.0)`, { param: 'version', code: 'invalid_field' });
    const rows = await this.#db.query('SELECT draft FROM skills WHERE name = ?', [name]);
    if (rows.length === 0) throw notFound(`skill '${name}'`);
    const all = (await this.#db.query('SELECT version, deleted_at FROM skill_versions WHERE skill = ?', [name])).map((r) => ({ version: String(r.version), deleted: r.deleted_at !== null && r.deleted_at !== undefined }));
    const same = all.find((v) => v.version === version);
    if (same) throw conflict(`version ${version} of skill '${name}' ${same.deleted ? 'was published and deleted' : 'is already published'}: versions are immutable and never reused, publish a greater one`, 'version_exists');
    const highest = all.map((v) => v.version).sort(compareSemver).at(-1);
    if (highest !== undefined && compareSemver(version, highest) <= 0) throw conflict(`version ${version} is not greater than ${highest}, the highest version of skill '${name}' published so far`, 'version_not_greater');
    const files = decodeFiles(rows[0].draft);
    const description = (await this.require(name)).description;
    const info: VersionInfo = { version, description, size: sizeOf(files), file_count: files.length, digest: digestOf(files), created_at: now };
    const changed = await this.#db.execute(
      'INSERT INTO skill_versions (skill, version, description, files, size, file_count, digest, created_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL) ON CONFLICT (skill, version) DO NOTHING',
      [name, version, description, encodeFiles(files), info.size, info.file_count, info.digest, now],
    );
    if (changed !== 1) throw conflict(`version ${version} of skill '${name}' is already published`, 'version_exists');
    if (opts.makeDefault) await this.setDefault(name, version);
    return info;
  }

  /** The highest version ever published (deleted ones included): the next number must be greater. */
  async highestVersion(name: string): Promise<string | undefined> {
    return (await this.#db.query('SELECT version FROM skill_versions WHERE skill = ?', [name])).map((r) => String(r.version)).sort(compareSemver).at(-1);
  }

  async setDefault(name: string, version: string | undefined): Promise<void> {
    if (version !== undefined) await this.version(name, version);
    const changed = await this.#db.execute('UPDATE skills SET default_version = ? WHERE name = ?', [version ?? null, name]);
    if (changed !== 1) throw notFound(`skill '${name}'`);
  }

  async version(name: string, version: string): Promise<PublishedSkill> {
    const rows = await this.#db.query('SELECT version, description, size, file_count, digest, created_at, files FROM skill_versions WHERE skill = ? AND version = ? AND deleted_at IS NULL', [name, version]);
    if (rows.length === 0) throw notFound(`version ${version} of skill '${name}'`);
    return { name, version: versionInfo(rows[0]), files: decodeFiles(rows[0].files) };
  }

  /** The version served when none is named, or undefined when none is published. */
  async current(name: string): Promise<PublishedSkill | undefined> {
    const s = await this.get(name);
    const v = s && currentVersion(s);
    return v && this.version(name, v.version);
  }

  /** Every skill's current version, for the marketplace and the all-skills archive. */
  async published(): Promise<PublishedSkill[]> {
    const out: PublishedSkill[] = [];
    for (const s of await this.list()) {
      const v = currentVersion(s);
      if (v) out.push(await this.version(s.name, v.version));
    }
    return out;
  }

  /** Deletes a version's files; the number stays taken. */
  async deleteVersion(name: string, version: string, now = Date.now()): Promise<void> {
    const changed = await this.#db.execute('UPDATE skill_versions SET files = NULL, deleted_at = ? WHERE skill = ? AND version = ? AND deleted_at IS NULL', [now, name, version]);
    if (changed !== 1) throw notFound(`version ${version} of skill '${name}'`);
    await this.#db.execute('UPDATE skills SET default_version = NULL WHERE name = ? AND default_version = ?', [name, version]);
  }

  /** Deletes a skill with every version: the name may then be created again. */
  async delete(name: string): Promise<void> {
    // Versions first: a failure between the two leaves a skill without versions, never versions
    // that a later skill of the same name would inherit.
    await this.#db.execute('DELETE FROM skill_versions WHERE skill = ?', [name]);
    const changed = await this.#db.execute('DELETE FROM skills WHERE name = ?', [name]);
    if (changed !== 1) throw notFound(`skill '${name}'`);
  }
}
