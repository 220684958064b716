// /api/skills: manage the skills repository (skills/store.ts). A skill is created from files (JSON
// text or base64, or a ZIP archive as base64), its draft edited, and the draft published as an
// immutable SemVer version. Every body is checked whole (skills/files.ts) before anything is
// written, so a refused upload loses nothing already stored.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import { GatewayError } from '../unified/errors.ts';
import type { SkillStore, SkillRecord, VersionInfo } from '../skills/store.ts';
import { currentVersion } from '../skills/store.ts';
import { checkSkill, fileJson, filesFromJson, normalisePath, type SkillFile, type SkillLimits } from '../skills/files.ts';
import { skillNameProblem } from '../skills/front-matter.ts';
import { readZip, stripTopDirectory } from '../skills/zip.ts';
import { skillsSettings } from '../skills/settings.ts';
import { reply } from './http.ts';
import type { SkillDetail, SkillList, SkillSummary, SkillVersionDetail, SkillVersionView } from './answers.ts';

const noStore = () =>
  new GatewayError(503, 'the skills repository needs a logs store: configure logs_store (sqlite or postgres) or client.enable_logging, then restart', {
    type: 'service_unavailable',
    code: 'skills_store_unavailable',
  });

const iso = (ms: number) => new Date(ms).toISOString();

export function versionView(v: VersionInfo): SkillVersionView {
  return { version: v.version, description: v.description, size: v.size, file_count: v.file_count, digest: v.digest, created_at: iso(v.created_at) };
}

export function skillSummary(s: SkillRecord): SkillSummary {
  return {
    name: s.name,
    description: s.description,
    current_version: currentVersion(s)?.version ?? null,
    default_version: s.default_version ?? null,
    latest_version: s.versions.at(-1)?.version ?? null,
    versions: s.versions.map(versionView),
    draft_size: s.draft_size,
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  };
}

function body(req: Request): Record<string, unknown> {
  const b: unknown = req.body;
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new GatewayError(400, 'the request body must be a JSON object', { param: null, code: 'invalid_field' });
  return b as Record<string, unknown>;
}

/** The files of a create or draft body: `files` (JSON) and/or `archive` (a base64 ZIP); both together are merged, `files` winning a path. */
export function uploadedFiles(b: Record<string, unknown>, limits: SkillLimits): SkillFile[] {
  if (b.files === undefined && b.archive === undefined) throw new GatewayError(400, "send the skill's files: `files` (an array of {path, content, encoding?}) or `archive` (a ZIP archive, base64)", { param: 'files', code: 'invalid_field' });
  let fromZip: SkillFile[] = [];
  if (b.archive !== undefined) {
    if (typeof b.archive !== 'string' || !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(b.archive)) throw new GatewayError(400, 'archive must be a ZIP archive encoded as base64', { param: 'archive', code: 'invalid_field' });
    const entries = readZip(Buffer.from(b.archive, 'base64'), limits);
    fromZip = stripTopDirectory(entries.map((e, i) => ({ path: normalisePath(e.path, `archive[${i}] ('${e.path.slice(0, 128)}')`), data: e.data })));
  }
  const fromJson = b.files === undefined ? [] : filesFromJson(b.files, limits);
  const given = new Set(fromJson.map((f) => f.path));
  return [...fromZip.filter((f) => !given.has(f.path)), ...fromJson];
}

function nameParam(req: Request): string {
  const name = String(req.params.name ?? '');
  const problem = skillNameProblem(name);
  if (problem) throw new GatewayError(400, `invalid skill name '${name.slice(0, 128)}' in the path: ${problem}`, { param: 'name', code: 'invalid_field' });
  return name;
}

export function skillsRouter(service: ConfigService, store: SkillStore | undefined): Router {
  const r = Router({ caseSensitive: true });
  const st = (): SkillStore => {
    if (!store) throw noStore();
    return store;
  };
  const limits = () => skillsSettings(service.current().config).limits;
  const detail = async (name: string): Promise<SkillDetail> => {
    const s = await st().require(name);
    return { ...skillSummary(s), draft: (await st().draft(name)).map(fileJson) };
  };

  r.get('/', async (_req: Request, res: Response) => {
    const skills = (await st().list()).map(skillSummary);
    reply(res, 200, { skills, count: skills.length } satisfies SkillList);
  });

  r.post('/', async (req: Request, res: Response) => {
    const b = body(req);
    const store = st();
    const { files, meta } = checkSkill(uploadedFiles(b, limits()), limits());
    if (b.name !== undefined && b.name !== meta.name) throw new GatewayError(400, `name '${String(b.name).slice(0, 128)}' is not the name SKILL.md gives ('${meta.name}'): the front matter names the skill`, { param: 'name', code: 'invalid_field' });
    await store.create(meta, files);
    reply(res, 201, await detail(meta.name));
  });

  r.get('/:name', async (req: Request, res: Response) => {
    reply(res, 200, await detail(nameParam(req)));
  });

  r.put('/:name/draft', async (req: Request, res: Response) => {
    const name = nameParam(req);
    const { files, meta } = checkSkill(uploadedFiles(body(req), limits()), limits());
    await st().saveDraft(name, meta, files);
    reply(res, 200, await detail(name));
  });

  // Only default_version may change here: everything else comes from SKILL.md.
  r.patch('/:name', async (req: Request, res: Response) => {
    const name = nameParam(req);
    const b = body(req);
    for (const k of Object.keys(b)) if (k !== 'default_version') throw new GatewayError(400, `field '${k}' cannot be changed here: a skill's name and description come from its SKILL.md (PUT /api/skills/${name}/draft); only default_version is set here`, { param: k, code: 'invalid_field' });
    if (b.default_version !== null && typeof b.default_version !== 'string') throw new GatewayError(400, 'default_version must be a published version, or null to serve the highest', { param: 'default_version', code: 'invalid_field' });
    await st().setDefault(name, b.default_version ?? undefined);
    reply(res, 200, await detail(name));
  });

  r.delete('/:name', async (req: Request, res: Response) => {
    const name = nameParam(req);
    await st().delete(name);
    reply(res, 200, { name, deleted: true });
  });

  r.get('/:name/versions', async (req: Request, res: Response) => {
    const s = await st().require(nameParam(req));
    reply(res, 200, { versions: s.versions.map(versionView), count: s.versions.length });
  });

  r.post('/:name/versions', async (req: Request, res: Response) => {
    const name = nameParam(req);
    const b = body(req);
    if (b.version === undefined) throw new GatewayError(400, 'version is required: the SemVer number to publish the draft as (e.g. 1.0.0)', { param: 'version', code: 'invalid_field' });
    if (b.default !== undefined && typeof b.default !== 'boolean') throw new GatewayError(400, 'default must be a boolean', { param: 'default', code: 'invalid_field' });
    const v = await st().publish(name, String(b.version), { makeDefault: b.default === true });
    reply(res, 201, versionView(v));
  });

  r.get('/:name/versions/:version', async (req: Request, res: Response) => {
    const name = nameParam(req);
    const v = await st().version(name, String(req.params.version));
    reply(res, 200, { ...versionView(v.version), skill: name, files: v.files.map(fileJson) } satisfies SkillVersionDetail);
  });

  r.delete('/:name/versions/:version', async (req: Request, res: Response) => {
    const name = nameParam(req);
    const version = String(req.params.version);
    await st().deleteVersion(name, version);
    reply(res, 200, { name, version, deleted: true });
  });

  return r;
}
