// The gateway's video jobs (the `videos` table of the logs store, logs/videos-migration.ts): the
// gateway's id of each video and the provider job behind it (provider, key, provider-side id), who
// made it, and what the provider last said of it. Shared by every replica through the store, so
// any replica answers for any video. A video is settled (priced and charged) exactly once: the
// conditional update in `settle` lets one request win, whichever replica it runs on.
import { randomBytes } from 'node:crypto';
import type { Row, SqlDriver } from '../logs/driver.ts';
import type { Video, VideoContentRef, VideoJobState, VideoStatus } from '../unified/video.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    /** The video jobs; undefined without a logs store (video routes then answer 503). */
    videos?: VideoStore;
  }
}

export interface VideoRecord {
  id: string;
  provider: string;
  model: string;
  key_id: string | undefined;
  upstream_id: string;
  virtual_key_id: string | undefined;
  request_type: string;
  prompt: string | undefined;
  seconds: string;
  size: string;
  status: VideoStatus;
  progress: number;
  error: { code: string; message: string } | undefined;
  content: VideoContentRef | undefined;
  remixed_from: string | undefined;
  /** Unix seconds. */
  created_at: number;
  completed_at: number | undefined;
  expires_at: number | undefined;
  settled: boolean;
  cost: number | undefined;
}

const COLUMNS =
  'id, provider, model, key_id, upstream_id, virtual_key_id, request_type, prompt, seconds, size, status, progress, error, content, remixed_from, created_at, completed_at, expires_at, settled, cost';

const opt = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));
const optNum = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
const json = <T>(v: unknown): T | undefined => (typeof v === 'string' ? (JSON.parse(v) as T) : undefined);

function toRecord(r: Row): VideoRecord {
  return {
    id: String(r.id),
    provider: String(r.provider),
    model: String(r.model),
    key_id: opt(r.key_id),
    upstream_id: String(r.upstream_id),
    virtual_key_id: opt(r.virtual_key_id),
    request_type: String(r.request_type),
    prompt: opt(r.prompt),
    seconds: String(r.seconds),
    size: String(r.size),
    status: String(r.status) as VideoStatus,
    progress: Number(r.progress ?? 0),
    error: json(r.error),
    content: json(r.content),
    remixed_from: opt(r.remixed_from),
    created_at: Number(r.created_at),
    completed_at: optNum(r.completed_at),
    expires_at: optNum(r.expires_at),
    settled: Number(r.settled ?? 0) === 1,
    cost: optNum(r.cost),
  };
}

/** A new video id: `video_` and 32 hex digits, like OpenAI's ids but the gateway's own. */
export const newVideoId = (): string => `video_${randomBytes(16).toString('hex')}`;

/** Only a reference is kept of the content: inline bytes (Vertex) are fetched again when downloaded. */
function storedContent(ref: VideoContentRef | undefined): string | null {
  if (!ref || ref.kind === 'inline') return null;
  return JSON.stringify(ref);
}

/** What a new record takes from the provider's first answer about its job (created now, not yet charged). */
export function firstJobFields(state: VideoJobState, now: number): Pick<VideoRecord, 'status' | 'progress' | 'error' | 'content' | 'created_at' | 'completed_at' | 'expires_at' | 'settled' | 'cost'> {
  return {
    status: state.status,
    progress: state.progress,
    error: state.error,
    content: state.content,
    created_at: now,
    completed_at: isFinished(state.status) ? (state.completedAt ?? now) : undefined,
    expires_at: state.expiresAt,
    settled: false,
    cost: undefined,
  };
}

export function isFinished(status: VideoStatus): boolean {
  return status === 'completed' || status === 'failed';
}

/** The record as OpenAI's video object, under the gateway's id. */
export function videoView(r: VideoRecord): Video {
  return {
    id: r.id,
    object: 'video',
    model: r.model,
    status: r.status,
    progress: r.progress,
    created_at: r.created_at,
    completed_at: r.completed_at ?? null,
    expires_at: r.expires_at ?? null,
    prompt: r.prompt ?? null,
    seconds: r.seconds,
    size: r.size,
    remixed_from_video_id: r.remixed_from ?? null,
    error: r.error ?? null,
  };
}

export interface ListOptions {
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

export class VideoStore {
  readonly #db: SqlDriver;

  constructor(db: SqlDriver) {
    this.#db = db;
  }

  async insert(r: VideoRecord): Promise<void> {
    await this.#db.execute(
      `INSERT INTO videos (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.id, r.provider, r.model, r.key_id ?? null, r.upstream_id, r.virtual_key_id ?? null, r.request_type, r.prompt ?? null, r.seconds, r.size,
        r.status, r.progress, r.error ? JSON.stringify(r.error) : null, storedContent(r.content), r.remixed_from ?? null, r.created_at,
        r.completed_at ?? null, r.expires_at ?? null, r.settled ? 1 : 0, r.cost ?? null,
      ],
    );
  }

  async get(id: string): Promise<VideoRecord | undefined> {
    const rows = await this.#db.query(`SELECT ${COLUMNS} FROM videos WHERE id = ?`, [id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /**
   * Writes what the provider now says of the job. A finished record is never moved back (a stale
   * answer read by a slower replica loses), and its status never changes once finished.
   */
  async update(r: VideoRecord, s: VideoJobState, now: number): Promise<VideoRecord> {
    if (isFinished(r.status)) return r;
    const next: VideoRecord = {
      ...r,
      status: s.status,
      progress: Math.max(0, Math.min(100, Math.round(s.progress))),
      seconds: s.seconds ?? r.seconds,
      size: s.size ?? r.size,
      error: s.error ?? r.error,
      content: s.content ?? r.content,
      completed_at: isFinished(s.status) ? (s.completedAt ?? now) : r.completed_at,
      expires_at: s.expiresAt ?? r.expires_at,
    };
    await this.#db.execute(
      `UPDATE videos SET status = ?, progress = ?, seconds = ?, size = ?, error = ?, content = ?, completed_at = ?, expires_at = ?
       WHERE id = ? AND status NOT IN ('completed', 'failed')`,
      [next.status, next.progress, next.seconds, next.size, next.error ? JSON.stringify(next.error) : null, storedContent(next.content), next.completed_at ?? null, next.expires_at ?? null, r.id],
    );
    return next;
  }

  /** Marks a finished video settled at `cost`; true for the one caller that did it. */
  async settle(id: string, cost: number): Promise<boolean> {
    return (await this.#db.execute('UPDATE videos SET settled = 1, cost = ? WHERE id = ? AND settled = 0', [cost, id])) === 1;
  }

  /** A page of one owner's videos ('' : made without a virtual key), newest first unless asked. */
  async list(virtualKeyId: string | undefined, o: ListOptions): Promise<{ data: VideoRecord[]; has_more: boolean }> {
    const params: unknown[] = [virtualKeyId ?? ''];
    let where = "COALESCE(virtual_key_id, '') = ?";
    if (o.after) {
      const cursor = await this.get(o.after);
      if (cursor) {
        const cmp = o.order === 'asc' ? '>' : '<';
        where += ` AND (created_at ${cmp} ? OR (created_at = ? AND id ${cmp} ?))`;
        params.push(cursor.created_at, cursor.created_at, cursor.id);
      }
    }
    const dir = o.order === 'asc' ? 'ASC' : 'DESC';
    const rows = await this.#db.query(`SELECT ${COLUMNS} FROM videos WHERE ${where} ORDER BY created_at ${dir}, id ${dir} LIMIT ?`, [...params, o.limit + 1]);
    const data = rows.slice(0, o.limit).map(toRecord);
    return { data, has_more: rows.length > o.limit };
  }

  async delete(id: string): Promise<boolean> {
    return (await this.#db.execute('DELETE FROM videos WHERE id = ?', [id])) === 1;
  }
}
