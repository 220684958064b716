// /skills/*: the public, read-only face of the skills repository, from which agents install skills.
//   GET /skills                                   index (JSON): every skill with its current version and URLs
//   GET /skills/marketplace.git/...               a git repository (dumb HTTP) holding the marketplace:
//                                                 `claude plugin marketplace add` / `codex plugin marketplace add`
//   GET /skills/.claude-plugin/marketplace.json   the Claude Code manifest (as in the repository)
//   GET /skills/.agents/plugins/marketplace.json  the Codex manifest (as in the repository)
//   GET /skills/all.zip                           every skill's current version, each under <name>/
//   GET /skills/<name>                            one skill (JSON): its versions
//   GET /skills/<name>/<version|latest>.zip       one version as a ZIP archive, under <name>/
//   GET /skills/<name>/<version|latest>/<path>    one file of a version, raw
// With `skills.serving: virtual_key` every one of them needs an active virtual key (or the
// management credentials); git sends it as the Basic password, so a 401 carries a Basic challenge.
import type { IncomingHttpHeaders } from 'node:http';
import type { Exchange } from '../http/exchange.ts';
import { sendError, sendJson } from '../http/respond.ts';
import type { Methods, PatternRoutes, Routes } from '../http/server.ts';
import { authenticate, managementAuth, parseBasic, SessionStore } from '../api/auth.ts';
import { identifyCaller } from '../governance/auth.ts';
import { findVirtualKey } from '../config/governance-runtime.ts';
import { GatewayError } from '../unified/errors.ts';
import type { SkillStore, PublishedSkill } from '../skills/store.ts';
import { currentVersion } from '../skills/store.ts';
import { skillsSettings } from '../skills/settings.ts';
import { claudeMarketplace, codexMarketplace, marketplaceTree, type MarketplaceInfo } from '../skills/marketplace.ts';
import { buildRepo, type GitRepo } from '../skills/git.ts';
import { writeZip } from '../skills/zip.ts';
import { fileJson } from '../skills/files.ts';

const NO_SESSIONS = new SessionStore();
const CHALLENGE = 'Basic realm="skybridge skills"';

const noStore = () =>
  new GatewayError(503, 'the skills repository needs a logs store: configure logs_store (sqlite or postgres) or client.enable_logging, then restart', {
    type: 'service_unavailable',
    code: 'skills_store_unavailable',
  });
const notFound = (what: string) => new GatewayError(404, `${what} not found`, { type: 'not_found_error', code: 'skill_not_found' });

/** Headers a credential arrives in: presenting one is an attempt the guess throttle counts. */
const CREDENTIAL_HEADERS = ['x-bf-vk', 'authorization', 'x-api-key'];

/**
 * Under `serving: virtual_key`: an active virtual key (any header the inference routes read, or the
 * Basic password), or the management credentials. A refused credential counts as a guess per client
 * address, as on the inference routes, so this door is no faster way to guess keys.
 */
export function admitted(ex: Exchange): void {
  const settings = skillsSettings(ex.snapshot.config);
  if (settings.serving === 'public') return;
  const headers: IncomingHttpHeaders = ex.req.headers;
  const client = ex.req.socket.remoteAddress;
  const presented = CREDENTIAL_HEADERS.some((h) => headers[h] !== undefined);
  if (presented && client !== undefined) ex.services.guesses.checkKey(client);
  const auth = managementAuth(ex.snapshot.governance.auth);
  if (auth.enabled && authenticate(headers, auth, NO_SESSIONS) !== undefined) return;
  const basic = parseBasic(headers.authorization);
  if (basic) {
    const vk = findVirtualKey(ex.snapshot.governance, basic.password);
    if (vk && vk.record.is_active !== false) return;
  } else {
    let vk;
    try {
      vk = identifyCaller(ex.snapshot.governance, headers);
    } catch {
      vk = undefined;
    }
    if (vk) return;
  }
  if (presented && client !== undefined) ex.services.guesses.fail(client, '', 'virtual_key');
  ex.res.setHeader('www-authenticate', CHALLENGE);
  throw new GatewayError(401, 'the skills repository is served to virtual keys only (skills.serving: virtual_key): send one in x-bf-vk, as a Bearer token, or as the Basic password (git: https://x:<key>@host/skills/marketplace.git)', {
    type: 'authentication_error',
    code: 'virtual_key_required',
  });
}

function baseUrl(ex: Exchange): string {
  const proto = String(ex.req.headers['x-forwarded-proto'] ?? '').split(',')[0].trim() || 'http';
  const host = String(ex.req.headers['x-forwarded-host'] ?? ex.req.headers.host ?? 'localhost').split(',')[0].trim();
  return `${proto === 'https' ? 'https' : 'http'}://${host}`;
}

function sendBytes(ex: Exchange, data: Buffer, type: string, extra: Record<string, string> = {}): void {
  // nosniff: an uploaded .html or .svg is served as the text it is, never rendered as a page of the gateway's origin.
  ex.res.writeHead(200, { 'content-type': type, 'content-length': data.length, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', ...extra });
  ex.res.end(data);
}

export function zipOf(skills: readonly PublishedSkill[]): Buffer {
  const entries = skills.flatMap((s) => s.files.map((f) => ({ path: `${s.name}/${f.path}`, data: f.data })));
  return writeZip(entries, Math.max(0, ...skills.map((s) => s.version.created_at)));
}

/** The repository of the current published state; rebuilt only when a version or the marketplace's name changes. */
class RepoCache {
  #key = '';
  #repo: GitRepo | undefined;

  async get(store: SkillStore, info: MarketplaceInfo): Promise<GitRepo> {
    const list = await store.list();
    const key = JSON.stringify([info, list.map((s) => [s.name, currentVersion(s)?.digest, currentVersion(s)?.version])]);
    if (this.#repo && key === this.#key) return this.#repo;
    const skills = await store.published();
    const time = Math.max(0, ...skills.map((s) => s.version.created_at));
    const repo = buildRepo(marketplaceTree(info, skills), time, `${info.name}: ${skills.map((s) => `${s.name}@${s.version.version}`).join(', ') || 'no skills published'}`);
    this.#key = key;
    this.#repo = repo;
    return repo;
  }
}

function handler(store: SkillStore | undefined, run: (ex: Exchange, store: SkillStore) => Promise<void>): (ex: Exchange) => Promise<void> {
  return async (ex) => {
    try {
      if (!store) throw noStore();
      admitted(ex);
      await run(ex, store);
    } catch (err) {
      sendError(ex.res, err);
    }
  };
}

async function versionOf(store: SkillStore, name: string, version: string): Promise<PublishedSkill> {
  if (version !== 'latest') return store.version(name, version);
  const current = await store.current(name);
  if (!current) throw notFound(`a published version of skill '${name}'`);
  return current;
}

const NAME = '([a-z0-9]+(?:-[a-z0-9]+)*)';
const VERSION = '([0-9A-Za-z.+-]{1,128})';

export function skillsRoutes(store: SkillStore | undefined): { routes: Routes; patterns: PatternRoutes } {
  const repos = new RepoCache();
  const info = (ex: Exchange): MarketplaceInfo => {
    const s = skillsSettings(ex.snapshot.config);
    return { name: s.marketplace, owner: s.owner };
  };
  const index = handler(store, async (ex, st) => {
    const base = baseUrl(ex);
    const skills = (await st.list()).map((s) => {
      const v = currentVersion(s);
      return {
        name: s.name,
        description: v?.description ?? s.description,
        version: v?.version ?? null,
        versions: s.versions.map((x) => x.version),
        ...(v && { archive_url: `${base}/skills/${s.name}/${v.version}.zip`, skill_md_url: `${base}/skills/${s.name}/${v.version}/SKILL.md` }),
      };
    });
    sendJson(ex.res, 200, {
      marketplace: info(ex).name,
      git_url: `${base}/skills/marketplace.git`,
      claude_code: `claude plugin marketplace add ${base}/skills/marketplace.git`,
      codex: `codex plugin marketplace add ${base}/skills/marketplace.git`,
      all_url: `${base}/skills/all.zip`,
      skills,
    });
  });
  const git = (file: (repo: GitRepo, ex: Exchange) => Buffer | undefined, type: string): Methods => ({
    GET: handler(store, async (ex, st) => {
      const repo = await repos.get(st, info(ex));
      const data = file(repo, ex);
      if (!data) throw notFound(`git object '${ex.params[0] ?? ''}${ex.params[1] ?? ''}'`);
      sendBytes(ex, data, type);
    }),
  });
  const routes: Routes = {
    '/skills': { GET: index },
    '/skills/': { GET: index },
    '/skills/.claude-plugin/marketplace.json': { GET: handler(store, async (ex, st) => sendJson(ex.res, 200, claudeMarketplace(info(ex), await st.published()))) },
    '/skills/.agents/plugins/marketplace.json': { GET: handler(store, async (ex, st) => sendJson(ex.res, 200, codexMarketplace(info(ex), await st.published()))) },
    '/skills/all.zip': { GET: handler(store, async (ex, st) => sendBytes(ex, zipOf(await st.published()), 'application/zip', { 'content-disposition': `attachment; filename="${info(ex).name}.zip"` })) },
    // A smart-protocol probe (info/refs?service=...) gets the plain file: git then reads the repository the dumb way.
    '/skills/marketplace.git/info/refs': git((r) => Buffer.from(r.infoRefs), 'text/plain; charset=utf-8'),
    '/skills/marketplace.git/HEAD': git(() => Buffer.from('ref: refs/heads/main\n'), 'text/plain; charset=utf-8'),
    '/skills/marketplace.git/objects/info/packs': git(() => Buffer.from(''), 'text/plain; charset=utf-8'),
  };
  const patterns: PatternRoutes = [
    [/^\/skills\/marketplace\.git\/objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/, git((r, ex) => r.objects.get(`${ex.params[0]}${ex.params[1]}`), 'application/x-git-loose-object')],
    [
      new RegExp(`^/skills/${NAME}/${VERSION}\\.zip$`),
      {
        GET: handler(store, async (ex, st) => {
          const v = await versionOf(st, ex.params[0], ex.params[1]);
          sendBytes(ex, zipOf([v]), 'application/zip', { 'content-disposition': `attachment; filename="${v.name}-${v.version.version}.zip"`, 'x-skill-version': v.version.version, etag: `"${v.version.digest}"` });
        }),
      },
    ],
    [
      new RegExp(`^/skills/${NAME}/${VERSION}/(.+)$`),
      {
        GET: handler(store, async (ex, st) => {
          const v = await versionOf(st, ex.params[0], ex.params[1]);
          const f = v.files.find((x) => x.path === ex.params[2]);
          if (!f) throw notFound(`file '${ex.params[2]}' in version ${v.version.version} of skill '${v.name}'`);
          const text = fileJson(f).encoding === 'utf8';
          sendBytes(ex, f.data, f.path.endsWith('.md') ? 'text/markdown; charset=utf-8' : text ? 'text/plain; charset=utf-8' : 'application/octet-stream', { 'x-skill-version': v.version.version });
        }),
      },
    ],
    [
      new RegExp(`^/skills/${NAME}/?$`),
      {
        GET: handler(store, async (ex, st) => {
          const s = await st.get(ex.params[0]);
          if (!s || s.versions.length === 0) throw notFound(`a published version of skill '${ex.params[0]}'`);
          const base = baseUrl(ex);
          const current = currentVersion(s);
          sendJson(ex.res, 200, {
            name: s.name,
            description: current?.description ?? s.description,
            version: current?.version,
            versions: s.versions.map((v) => ({ version: v.version, description: v.description, size: v.size, file_count: v.file_count, digest: v.digest, created_at: new Date(v.created_at).toISOString(), archive_url: `${base}/skills/${s.name}/${v.version}.zip` })),
          });
        }),
      },
    ],
  ];
  return { routes, patterns };
}
