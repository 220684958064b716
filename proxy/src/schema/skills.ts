// `skills`: the skills repository's settings (a Skybridge extension; the skills themselves live in
// the logs store, managed through /api/skills). Who may read the public serving routes (/skills/*),
// the marketplace's name and owner, and the limits an upload is held to.
import { Type, type Static } from '@sinclair/typebox';

export const SkillsConfigSchema = Type.Object(
  {
    serving: Type.Optional(
      Type.Union([Type.Literal('public'), Type.Literal('virtual_key')], {
        description: "Who may read /skills/* (marketplace manifests, archives, the git repository): 'public' (default) anyone; 'virtual_key' only callers presenting an active virtual key (x-bf-vk, Bearer, x-api-key, or as the Basic password, which git sends). Management (/api/skills) always needs the management credentials.",
      }),
    ),
    marketplace_name: Type.Optional(Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 64, description: "The marketplace's name in the manifests Claude Code and Codex read (default skybridge-skills); plugins install as <skill>@<marketplace_name>." })),
    owner: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "The marketplace owner's name in the Claude Code manifest (default Skybridge)." })),
    max_files: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Files one skill may hold (default 256).' })),
    max_file_size_kb: Type.Optional(Type.Integer({ minimum: 1, maximum: 7168, description: 'KiB one file may hold (default 1024).' })),
    max_total_size_kb: Type.Optional(Type.Integer({ minimum: 1, maximum: 7168, description: "KiB all of a skill's files may hold together (default 4096); an /api body is also capped at 10 MB, and base64 content takes 4/3 of its size there." })),
  },
  { additionalProperties: false },
);

export type SkillsConfig = Static<typeof SkillsConfigSchema>;
