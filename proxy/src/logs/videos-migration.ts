// The videos table (state/videos.ts): each video job the gateway started, by the gateway's own id,
// with the provider, key and provider-side id it maps to. In the logs store so every replica
// answers for every video (SQLite embedded, PostgreSQL shared).
import type { Migration } from './driver.ts';

export const VIDEOS_MIGRATION: Migration = {
  version: 9,
  description: "video jobs: the gateway's id of each video and the provider job it maps to",
  statements: (d) => [
    `CREATE TABLE videos (
      id TEXT PRIMARY KEY,
      provider TEXT NOT NULL,
      model TEXT NOT NULL,
      key_id TEXT,
      upstream_id TEXT NOT NULL,
      virtual_key_id TEXT,
      request_type TEXT NOT NULL,
      prompt TEXT,
      seconds TEXT NOT NULL,
      size TEXT NOT NULL,
      status TEXT NOT NULL,
      progress INTEGER NOT NULL DEFAULT 0,
      error TEXT,
      content TEXT,
      remixed_from TEXT,
      created_at BIGINT NOT NULL,
      completed_at BIGINT,
      expires_at BIGINT,
      settled INTEGER NOT NULL DEFAULT 0,
      cost ${d.double}
    )`,
    'CREATE INDEX videos_vk_time ON videos (virtual_key_id, created_at)',
  ],
};
