// The marketplace the gateway serves, as a file tree: one plugin per skill (its current version),
// with the manifests Claude Code (.claude-plugin/) and Codex (.agents/plugins/, .codex-plugin/) read.
// Both tools add a marketplace from a git repository and resolve `./plugins/<name>` inside it, so
// the same tree is served as a git repository (skills/git.ts) and its manifests over plain HTTP.
import type { SkillFile } from './files.ts';
import type { PublishedSkill } from './store.ts';

export interface MarketplaceInfo {
  name: string;
  owner: string;
}

const json = (v: unknown): Buffer => Buffer.from(`${JSON.stringify(v, null, 2)}\n`, 'utf8');

/** The Claude Code marketplace manifest (.claude-plugin/marketplace.json). */
export function claudeMarketplace(info: MarketplaceInfo, skills: readonly PublishedSkill[]): unknown {
  return {
    name: info.name,
    owner: { name: info.owner },
    metadata: { description: 'Agent Skills published on this Skybridge gateway' },
    plugins: skills.map((s) => ({
      name: s.name,
      source: `./plugins/${s.name}`,
      description: s.version.description,
      version: s.version.version,
    })),
  };
}

/** The Codex marketplace manifest (.agents/plugins/marketplace.json). */
export function codexMarketplace(info: MarketplaceInfo, skills: readonly PublishedSkill[]): unknown {
  return {
    name: info.name,
    interface: { displayName: info.owner === 'Skybridge' ? 'Skybridge skills' : `${info.owner} skills` },
    plugins: skills.map((s) => ({
      name: s.name,
      source: { source: 'local', path: `./plugins/${s.name}` },
      policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' },
      category: 'Productivity',
    })),
  };
}

/** Every file of the marketplace repository, by path. */
export function marketplaceTree(info: MarketplaceInfo, skills: readonly PublishedSkill[]): SkillFile[] {
  const files: SkillFile[] = [
    { path: '.claude-plugin/marketplace.json', data: json(claudeMarketplace(info, skills)) },
    { path: '.agents/plugins/marketplace.json', data: json(codexMarketplace(info, skills)) },
  ];
  for (const s of skills) {
    const root = `plugins/${s.name}`;
    const manifest = { name: s.name, version: s.version.version, description: s.version.description };
    files.push({ path: `${root}/.claude-plugin/plugin.json`, data: json(manifest) });
    files.push({ path: `${root}/.codex-plugin/plugin.json`, data: json({ ...manifest, skills: './skills/' }) });
    for (const f of s.files) files.push({ path: `${root}/skills/${s.name}/${f.path}`, data: f.data });
  }
  return files;
}
