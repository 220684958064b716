// Indexed `content_search`: a substring search of the logged request/response content.
// SQLite: an FTS5 index with the trigram tokenizer (finds the records holding every 3-character
//   piece of the term, case-insensitively; positions are not kept). Its rows are keyed by log_search.seq, an INTEGER PRIMARY KEY, so VACUUM (which
//   may renumber a plain table's rowids) cannot desynchronise it; triggers keep both in step with logs.
// PostgreSQL: pg_trgm GIN indexes, which ILIKE '%…%' uses directly, when the extension can be
//   created (it is a trusted extension: the database owner may); without it the search reads the rows.
// Either way the LIKE/ILIKE test still runs on the candidates, so the answers are exactly those of a
// plain substring match; terms shorter than 3 characters skip the index.
import type { Dialect } from './driver.ts';

export const MIN_INDEXED_TERM = 3;

export function contentSearchStatements(d: Dialect): string[] {
  if (d.name === 'sqlite') {
    const has = (r: string): string => `(${r}.input_content IS NOT NULL OR ${r}.output_content IS NOT NULL)`;
    return [
      'CREATE TABLE log_search (seq INTEGER PRIMARY KEY, log_id TEXT NOT NULL UNIQUE)',
      "CREATE VIRTUAL TABLE logs_fts USING fts5(input_content, output_content, content='', contentless_delete=1, detail='none', tokenize='trigram')",
      `INSERT INTO log_search (log_id) SELECT l.id FROM logs l WHERE ${has('l')} ORDER BY l.timestamp`,
      'INSERT INTO logs_fts (rowid, input_content, output_content) SELECT s.seq, l.input_content, l.output_content FROM log_search s JOIN logs l ON l.id = s.log_id',
      `CREATE TRIGGER logs_search_insert AFTER INSERT ON logs WHEN ${has('new')} BEGIN
        INSERT INTO log_search (log_id) VALUES (new.id);
        INSERT INTO logs_fts (rowid, input_content, output_content) VALUES (last_insert_rowid(), new.input_content, new.output_content);
      END`,
      `CREATE TRIGGER logs_search_delete AFTER DELETE ON logs WHEN ${has('old')} BEGIN
        DELETE FROM logs_fts WHERE rowid = (SELECT seq FROM log_search WHERE log_id = old.id);
        DELETE FROM log_search WHERE log_id = old.id;
      END`,
    ];
  }
  // A failure to create the extension (no privilege, contrib not installed) must not fail the
  // migration: the search then works unindexed.
  return [
    `DO $do$ BEGIN
       CREATE EXTENSION IF NOT EXISTS pg_trgm;
     EXCEPTION WHEN OTHERS THEN
       RAISE NOTICE 'pg_trgm unavailable (%): content_search reads the rows', SQLERRM;
     END $do$`,
    `DO $do$ BEGIN
       IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
         CREATE INDEX logs_input_trgm ON logs USING gin (input_content gin_trgm_ops);
         CREATE INDEX logs_output_trgm ON logs USING gin (output_content gin_trgm_ops);
       END IF;
     END $do$`,
  ];
}

/**
 * FTS5 query for the records whose content holds every trigram of `term`: a superset of the
 * substring matches (the index keeps no positions, detail=none, which makes it several times
 * cheaper to write), narrowed to exactly those by the LIKE test that follows.
 */
export function ftsQuery(term: string): string {
  const chars = [...term];
  const grams = new Set<string>();
  for (let i = 0; i + MIN_INDEXED_TERM <= chars.length; i++) grams.add(chars.slice(i, i + MIN_INDEXED_TERM).join(''));
  return [...grams].map((g) => `"${g.replace(/"/g, '""')}"`).join(' ');
}
