// /v1/skills: OpenAI's Skills API shape (the `openai` package's client.skills) over the same
// repository as /api/skills, so the official SDK manages and downloads the gateway's skills.
//   POST   /v1/skills                                 create from uploaded files (or one ZIP): publishes 1.0.0
//   GET    /v1/skills                                 list (cursor page: after, limit, order)
//   GET    /v1/skills/{id}                            retrieve (id is the skill's name)
//   POST   /v1/skills/{id}                            update default_version
//   DELETE /v1/skills/{id}
//   GET    /v1/skills/{id}/content                    ZIP of the default version
//   POST   /v1/skills/{id}/versions                   new version from uploaded files: the next minor
//   GET    /v1/skills/{id}/versions                   list
//   GET    /v1/skills/{id}/versions/{version}         retrieve
//   DELETE /v1/skills/{id}/versions/{version}
//   GET    /v1/skills/{id}/versions/{version}/content ZIP of that version
// OpenAI numbers versions 1, 2, ...; the gateway's are SemVer, so a version made here is the next
// minor after the highest one (1.0.0, 1.1.0, ...). Writes need the management credentials (a
// management API key as the SDK's apiKey, or Basic); reads are served like /skills/*.
import type { Exchange } from '../http/exchange.ts';
import { readForm, isFile } from '../http/multipart.ts';
import { parseJson, readBody } from '../http/body.ts';
import { sendError, sendJson } from '../http/respond.ts';
import type { Methods, PatternRoutes, Routes } from '../http/server.ts';
import { authenticate, managementAuth, parseBasic, SessionStore } from '../api/auth.ts';
import { checkLocalOnly } from '../api/guards.ts';
import { GatewayError } from '../unified/errors.ts';
import { OPENAI_PREFIXES } from '../unified/operations.ts';
import { currentVersion, type SkillRecord, type SkillStore, type VersionInfo } from '../skills/store.ts';
import { checkSkill, normalisePath, type SkillFile } from '../skills/files.ts';
import { readZip, stripTopDirectory } from '../skills/zip.ts';
import { nextVersion } from '../skills/semver.ts';
import { skillsSettings } from '../skills/settings.ts';
import { admitted, zipOf } from './skills.ts';

const NO_SESSIONS = new SessionStore();

const noStore = () =>
  new GatewayError(503, 'the skills repository needs a logs store: configure logs_store (sqlite or postgres) or client.enable_logging, then restart', { type: 'service_unavailable', code: 'skills_store_unavailable' });

/** Writes: the management credentials, or a loopback client while management auth is off (as /api). */
function manager(ex: Exchange): void {
  const auth = managementAuth(ex.snapshot.governance.auth);
  if (!auth.enabled) return checkLocalOnly(ex.req);
  // Failed credentials count as guesses per client address, as on /api.
  const client = ex.req.socket.remoteAddress;
  const { authorization, 'x-api-key': apiKey } = ex.req.headers;
  if (client !== undefined && (authorization !== undefined || apiKey !== undefined)) ex.services.guesses.check(client);
  if (authenticate(ex.req.headers, auth, NO_SESSIONS) === undefined) {
    const basic = parseBasic(authorization);
    if (client !== undefined && (authorization !== undefined || apiKey !== undefined)) ex.services.guesses.fail(client, basic?.username ?? '', basic ? 'basic' : 'api_key');
    throw new GatewayError(401, 'changing skills needs the management credentials: a management API key as the Bearer token (the SDK apiKey), or Basic admin credentials', { type: 'authentication_error', code: 'management_auth_required' });
  }
}

/** Reads: the management credentials, or whatever /skills/* admits (skills.serving). */
function reader(ex: Exchange): void {
  const auth = managementAuth(ex.snapshot.governance.auth);
  if (auth.enabled && authenticate(ex.req.headers, auth, NO_SESSIONS) !== undefined) return;
  admitted(ex);
}

const seconds = (ms: number) => Math.floor(ms / 1000);

function skillObject(s: SkillRecord) {
  return {
    id: s.name,
    object: 'skill' as const,
    name: s.name,
    description: currentVersion(s)?.description ?? s.description,
    created_at: seconds(s.created_at),
    default_version: currentVersion(s)?.version ?? '',
    latest_version: s.versions.at(-1)?.version ?? '',
  };
}

function versionObject(name: string, v: VersionInfo) {
  return { id: `${name}@${v.version}`, object: 'skill.version' as const, skill_id: name, name, description: v.description, version: v.version, created_at: seconds(v.created_at) };
}

/** A cursor page as the SDK's CursorPage reads it: `after` is the last id of the page before. */
function page<T extends { id: string }>(ex: Exchange, items: T[]): { object: 'list'; data: T[]; first_id: string | null; last_id: string | null; has_more: boolean } {
  const q = ex.query();
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError(400, "order must be 'asc' or 'desc'", { param: 'order', code: 'invalid_field' });
  const limitText = q.get('limit') ?? '20';
  const limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : NaN;
  if (!(limit >= 1 && limit <= 100)) throw new GatewayError(400, 'limit must be a whole number from 1 to 100', { param: 'limit', code: 'invalid_field' });
  const sorted = order === 'asc' ? items : [...items].reverse();
  const after = q.get('after');
  let start = 0;
  if (after !== null) {
    const i = sorted.findIndex((x) => x.id === after);
    if (i < 0) throw new GatewayError(400, `after '${after.slice(0, 128)}' is not an id of this list`, { param: 'after', code: 'invalid_field' });
    start = i + 1;
  }
  const data = sorted.slice(start, start + limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < sorted.length };
}

/** The uploaded files: several `files` parts (their filenames are the paths), or one ZIP archive. */
async function uploaded(ex: Exchange): Promise<{ files: SkillFile[]; makeDefault: boolean | undefined }> {
  const parts = await readForm(ex.req, ex.snapshot.maxBodyBytes, { preservePath: true });
  const limits = skillsSettings(ex.snapshot.config).limits;
  const uploads = parts.filter(isFile).filter((p) => /^files(\[\d*\])?$/.test(p.name));
  if (uploads.length === 0) throw new GatewayError(400, 'files is required: the skill directory\'s files (each part\'s filename its path), or one ZIP archive', { param: 'files', code: 'invalid_field' });
  const field = parts.find((p) => !isFile(p) && p.name === 'default');
  const makeDefault = field && !isFile(field) ? field.value === 'true' : undefined;
  const zip = uploads.length === 1 && (uploads[0].filename.toLowerCase().endsWith('.zip') || /zip/.test(uploads[0].contentType));
  const raw = zip
    ? readZip(uploads[0].data, limits).map((e, i) => ({ path: normalisePath(e.path, `files[0] entry ${i} ('${e.path.slice(0, 128)}')`), data: e.data }))
    : uploads.map((u, i) => ({ path: normalisePath(u.filename, `files[${i}].filename`), data: u.data }));
  return { files: stripTopDirectory(raw), makeDefault };
}

type Run = (ex: Exchange, store: SkillStore) => Promise<void>;

function route(store: SkillStore | undefined, access: (ex: Exchange) => void, run: Run, reads: boolean): (ex: Exchange) => Promise<void> {
  return async (ex) => {
    try {
      if (!store) throw noStore();
      access(ex);
      await run(ex, store);
    } catch (err) {
      // A refusal before a multipart body was read leaves it unread; sendError closes such a connection.
      sendError(ex.res, err, reads ? undefined : { request_type: 'skills' });
    }
  };
}

export function openaiSkillsRoutes(store: SkillStore | undefined): { routes: Routes; patterns: PatternRoutes } {
  const read = (run: Run) => route(store, reader, run, true);
  const write = (run: Run) => route(store, manager, run, false);
  const sendZip = (ex: Exchange, v: Awaited<ReturnType<SkillStore['version']>>) => {
    const data = zipOf([v]);
    ex.res.writeHead(200, { 'content-type': 'application/zip', 'content-length': data.length, 'content-disposition': `attachment; filename="${v.name}-${v.version.version}.zip"` });
    ex.res.end(data);
  };
  const collection: Methods = {
    GET: read(async (ex, st) => sendJson(ex.res, 200, page(ex, (await st.list()).sort((a, b) => a.created_at - b.created_at || (a.name < b.name ? -1 : 1)).map(skillObject)))),
    POST: write(async (ex, st) => {
      const { files: raw } = await uploaded(ex);
      const { files, meta } = checkSkill(raw, skillsSettings(ex.snapshot.config).limits);
      await st.create(meta, files);
      try {
        await st.publish(meta.name, nextVersion(undefined));
      } catch (err) {
        // A skill made here always has a version: undo the create rather than leave half of it.
        await st.delete(meta.name).catch(() => undefined);
        throw err;
      }
      sendJson(ex.res, 200, skillObject(await st.require(meta.name)));
    }),
  };
  const one: Methods = {
    GET: read(async (ex, st) => sendJson(ex.res, 200, skillObject(await st.require(ex.params[0])))),
    POST: write(async (ex, st) => {
      const body = parseJson(await readBody(ex.req, 64 * 1024));
      const v = (body as { default_version?: unknown } | null)?.default_version;
      if (typeof v !== 'string' || v === '') throw new GatewayError(400, 'default_version is required: a published version of this skill', { param: 'default_version', code: 'invalid_field' });
      await st.setDefault(ex.params[0], v);
      sendJson(ex.res, 200, skillObject(await st.require(ex.params[0])));
    }),
    DELETE: write(async (ex, st) => {
      await st.delete(ex.params[0]);
      sendJson(ex.res, 200, { id: ex.params[0], object: 'skill.deleted', deleted: true });
    }),
  };
  const content: Methods = {
    GET: read(async (ex, st) => {
      const v = await st.current(ex.params[0]);
      if (!v) throw new GatewayError(404, `skill '${ex.params[0]}' has no published version`, { type: 'not_found_error', code: 'skill_not_found' });
      sendZip(ex, v);
    }),
  };
  const versions: Methods = {
    GET: read(async (ex, st) => {
      const s = await st.require(ex.params[0]);
      sendJson(ex.res, 200, page(ex, s.versions.map((v) => versionObject(s.name, v))));
    }),
    POST: write(async (ex, st) => {
      const name = ex.params[0];
      await st.require(name);
      const { files: raw, makeDefault } = await uploaded(ex);
      const { files, meta } = checkSkill(raw, skillsSettings(ex.snapshot.config).limits);
      await st.saveDraft(name, meta, files);
      const v = await st.publish(name, nextVersion(await st.highestVersion(name)), { makeDefault: makeDefault === true });
      sendJson(ex.res, 200, versionObject(name, v));
    }),
  };
  const version: Methods = {
    GET: read(async (ex, st) => sendJson(ex.res, 200, versionObject(ex.params[0], (await st.version(ex.params[0], ex.params[1])).version))),
    DELETE: write(async (ex, st) => {
      await st.deleteVersion(ex.params[0], ex.params[1]);
      sendJson(ex.res, 200, { id: `${ex.params[0]}@${ex.params[1]}`, object: 'skill.version.deleted', deleted: true, version: ex.params[1] });
    }),
  };
  const versionContent: Methods = { GET: read(async (ex, st) => sendZip(ex, await st.version(ex.params[0], ex.params[1]))) };

  const routes: Routes = {};
  const patterns: PatternRoutes = [];
  const NAME = '([a-z0-9]+(?:-[a-z0-9]+)*)';
  const VERSION = '([0-9A-Za-z.+-]{1,128})';
  for (const prefix of OPENAI_PREFIXES) {
    routes[`${prefix}/skills`] = collection;
    const p = prefix.replace(/\//g, '\\/');
    patterns.push(
      [new RegExp(`^${p}\\/skills\\/${NAME}$`), one],
      [new RegExp(`^${p}\\/skills\\/${NAME}\\/content$`), content],
      [new RegExp(`^${p}\\/skills\\/${NAME}\\/versions$`), versions],
      [new RegExp(`^${p}\\/skills\\/${NAME}\\/versions\\/${VERSION}$`), version],
      [new RegExp(`^${p}\\/skills\\/${NAME}\\/versions\\/${VERSION}\\/content$`), versionContent],
    );
  }
  return { routes, patterns };
}

