// The skills repository's tables (skills/store.ts), in the request-log store's database so every
// replica sharing the store serves the same skills. A skill's draft and each published version keep
// their files as one JSON text (paths and base64 contents): the limits keep a skill small, and a
// version is written once, in one statement, so it is never seen half written.
import type { Migration } from './driver.ts';

export const SKILLS_MIGRATION: Migration = {
  version: 8,
  description: 'skills repository: skills with their drafts, and immutable published versions',
  statements: () => [
    `CREATE TABLE skills (
      name TEXT PRIMARY KEY,
      description TEXT NOT NULL,
      draft TEXT NOT NULL,
      draft_size BIGINT NOT NULL,
      default_version TEXT,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL
    )`,
    // A deleted version keeps its row without files (deleted_at set): its number is never reused,
    // so a version a client installed can never come back with other content.
    `CREATE TABLE skill_versions (
      skill TEXT NOT NULL,
      version TEXT NOT NULL,
      description TEXT NOT NULL,
      files TEXT,
      size BIGINT NOT NULL,
      file_count INTEGER NOT NULL,
      digest TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      deleted_at BIGINT,
      PRIMARY KEY (skill, version)
    )`,
  ],
};
