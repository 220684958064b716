// /api/logs: search, one record, stats, histograms, filter values, the dropped count and delete, as
// the reference's logging API has them. Every query is bounded: pages are capped, histograms cover a
// window (the last 24 h unless given) in at most ~120 buckets, PostgreSQL runs under a statement timeout.
import { Router, type Request, type Response } from 'express';
import { GatewayError } from '../unified/errors.ts';
import { reply, pathParam } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { objectBody } from './errors.ts';
import { checkKnownParams, FILTER_PARAMS, PAGE_PARAMS, parseFilters, parsePage, type LogFilters } from '../logs/query.ts';
import { bucketStarts, histogramWindow, type HistogramWindow } from '../logs/window.ts';
import type { BucketRow, GroupBy, LatencyRow, LogStore } from '../logs/store.ts';
import type { FilterData, LogSearch, LogStats, UsageBreakdown } from './answers.ts';
import { DEFAULT_GROUPS, MAX_GROUPS } from '../logs/breakdown.ts';
import { BREAKDOWN_DIMENSIONS, type BreakdownBy } from '../logs/record.ts';
import { CONTENT_TYPE, csvHeader, csvLine, EXPORT_FORMATS, jsonLine, type ExportFormat } from '../logs/export.ts';

export interface LogsApiSource {
  store: LogStore;
  /** Records lost by the writer so far. */
  dropped(): number;
}

const MAX_ID_LENGTH = 256;
/** Records an export reads per query: its memory is one batch, however many match. */
const EXPORT_BATCH = 500;
const MAX_DELETE = 1000;
const UNKNOWN_GROUP = 'unknown';

const iso = (ms: number): string => new Date(ms).toISOString();

function filtersOf(req: Request, extra: readonly string[] = []): LogFilters {
  const query = req.query as Record<string, unknown>;
  checkKnownParams(query, [...FILTER_PARAMS, ...extra]);
  return parseFilters(query);
}

function noParams(req: Request): void {
  checkKnownParams(req.query as Record<string, unknown>, []);
}

/** Rows grouped per bucket start, every bucket of the window present (oldest first). */
function perBucket<T extends { bucket: number }>(w: HistogramWindow, rows: readonly T[]): [number, T[]][] {
  const by = new Map<number, T[]>(bucketStarts(w).map((b) => [b, []]));
  for (const r of rows) {
    const list = by.get(r.bucket);
    if (list) list.push(r);
    else by.set(r.bucket, [r]);
  }
  return [...by.entries()].sort((a, b) => a[0] - b[0]);
}

const label = (g: string): string => (g === '' ? UNKNOWN_GROUP : g);
const groups = (rows: readonly { group: string }[]): string[] => [...new Set(rows.map((r) => label(r.group)))].sort();
const sum = (rows: readonly BucketRow[], f: (r: BucketRow) => number): number => rows.reduce((a, r) => a + f(r), 0);

function latencyStats(r: LatencyRow | undefined) {
  return { avg_latency: r?.avg ?? 0, p90_latency: r?.p90 ?? 0, p95_latency: r?.p95 ?? 0, p99_latency: r?.p99 ?? 0, total_requests: r?.count ?? 0 };
}

export function logsRouter(source: LogsApiSource | undefined): Router {
  const router = Router({ caseSensitive: true });
  if (!source) {
    router.use(() => {
      throw new GatewayError(404, 'request logs are off on this gateway (client.enable_logging is false, or the logs store could not be opened at start: see its log)', { type: 'not_found_error', code: 'logs_disabled' });
    });
    return router;
  }
  const { store } = source;

  const histogram = (path: string, groupBy: GroupBy, shape: (w: HistogramWindow, rows: BucketRow[]) => Record<string, unknown>): void => {
    router
      .route(path)
      .get(async (req: Request, res: Response) => {
        const filters = filtersOf(req);
        const w = histogramWindow(filters);
        const rows = await store.buckets(filters, w, groupBy);
        reply(res, 200, { ...shape(w, rows), bucket_size_seconds: w.bucketMs / 1000 });
      })
      .all(methodNotAllowed);
  };
  const latencyHistogram = (path: string, groupBy: GroupBy, shape: (w: HistogramWindow, rows: LatencyRow[]) => Record<string, unknown>): void => {
    router
      .route(path)
      .get(async (req: Request, res: Response) => {
        const filters = filtersOf(req);
        const w = histogramWindow(filters);
        const rows = await store.latency(filters, w, groupBy);
        reply(res, 200, { ...shape(w, rows), bucket_size_seconds: w.bucketMs / 1000 });
      })
      .all(methodNotAllowed);
  };

  router
    .route('/')
    .get(async (req: Request, res: Response) => {
      const filters = filtersOf(req, PAGE_PARAMS);
      const page = parsePage(req.query as Record<string, unknown>);
      // The summary first: its count tells the page query whether the matches are few or many.
      const summary = await store.listSummary(filters);
      const [result, hasLogs] = await Promise.all([
        store.search(filters, page, { count: false, matching: summary.matching, many: summary.matching === undefined }),
        store.hasLogs(),
      ]);
      const { cursor, ...shown } = page;
      reply(res, 200, {
        logs: result.logs,
        pagination: { ...shown, ...(cursor ? { cursor: req.query.cursor } : {}), total_count: summary.stats.total_requests, next_cursor: result.next_cursor ?? null },
        stats: summary.stats,
        has_logs: hasLogs,
      } satisfies LogSearch);
    })
    .delete(async (req: Request, res: Response) => {
      noParams(req);
      const body = objectBody(req.body, 'logs to delete');
      const ids = body.ids;
      if (!Array.isArray(ids) || ids.length === 0) throw new GatewayError(400, 'ids: expected a non-empty array of log ids', { param: 'ids', code: 'invalid_field' });
      if (ids.length > MAX_DELETE) throw new GatewayError(400, `ids: at most ${MAX_DELETE} per request`, { param: 'ids', code: 'invalid_field' });
      ids.forEach((id, i) => {
        if (typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH) {
          throw new GatewayError(400, `ids[${i}]: expected a log id (a non-empty string of at most ${MAX_ID_LENGTH} characters)`, { param: `ids[${i}]`, code: 'invalid_field' });
        }
      });
      for (const k of Object.keys(body)) if (k !== 'ids') throw new GatewayError(400, `${k}: unknown field`, { param: k, code: 'invalid_field' });
      const deleted = await store.deleteIds([...new Set(ids as string[])]);
      reply(res, 200, { message: `deleted ${deleted} log${deleted === 1 ? '' : 's'}`, deleted });
    })
    .all(methodNotAllowed);

  router
    .route('/stats')
    .get(async (req: Request, res: Response) => reply(res, 200, (await store.stats(filtersOf(req))) satisfies LogStats))
    .all(methodNotAllowed);

  router
    .route('/dropped')
    .get((req: Request, res: Response) => {
      noParams(req);
      reply(res, 200, { dropped_requests: source.dropped() });
    })
    .all(methodNotAllowed);

  router
    .route('/filterdata')
    .get(async (req: Request, res: Response) => {
      noParams(req);
      reply(res, 200, (await store.filterData()) satisfies FilterData);
    })
    .all(methodNotAllowed);

  histogram('/histogram', 'none', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({ timestamp: iso(b), count: sum(rs, (r) => r.count), success: sum(rs, (r) => r.success), error: sum(rs, (r) => r.error) })),
  }));
  histogram('/histogram/tokens', 'none', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({
      timestamp: iso(b),
      prompt_tokens: sum(rs, (r) => r.prompt_tokens),
      completion_tokens: sum(rs, (r) => r.completion_tokens),
      total_tokens: sum(rs, (r) => r.total_tokens),
    })),
  }));
  histogram('/histogram/cost', 'model', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({
      timestamp: iso(b),
      total_cost: sum(rs, (r) => r.cost),
      by_model: Object.fromEntries(rs.map((r) => [label(r.group), r.cost])),
    })),
    models: groups(rows),
  }));
  histogram('/histogram/models', 'model', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({
      timestamp: iso(b),
      by_model: Object.fromEntries(rs.map((r) => [label(r.group), { total: r.count, success: r.success, error: r.error }])),
    })),
    models: groups(rows),
  }));
  histogram('/histogram/cost/by-provider', 'provider', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({
      timestamp: iso(b),
      total_cost: sum(rs, (r) => r.cost),
      by_provider: Object.fromEntries(rs.map((r) => [label(r.group), r.cost])),
    })),
    providers: groups(rows),
  }));
  histogram('/histogram/tokens/by-provider', 'provider', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({
      timestamp: iso(b),
      by_provider: Object.fromEntries(
        rs.map((r) => [label(r.group), { prompt_tokens: r.prompt_tokens, completion_tokens: r.completion_tokens, total_tokens: r.total_tokens }]),
      ),
    })),
    providers: groups(rows),
  }));
  latencyHistogram('/histogram/latency', 'none', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({ timestamp: iso(b), ...latencyStats(rs[0]) })),
  }));
  latencyHistogram('/histogram/latency/by-provider', 'provider', (w, rows) => ({
    buckets: perBucket(w, rows).map(([b, rs]) => ({ timestamp: iso(b), by_provider: Object.fromEntries(rs.map((r) => [label(r.group), latencyStats(r)])) })),
    providers: groups(rows),
  }));

  // Usage by provider, model, virtual key or team over the window (the overview's charts).
  router
    .route('/breakdown')
    .get(async (req: Request, res: Response) => {
      const filters = filtersOf(req, ['by', 'limit']);
      const q = req.query as Record<string, unknown>;
      const by = q.by ?? 'provider';
      if (typeof by !== 'string' || !(BREAKDOWN_DIMENSIONS as readonly string[]).includes(by)) {
        throw new GatewayError(400, `invalid query parameter 'by': expected one of ${BREAKDOWN_DIMENSIONS.join(', ')}`, { param: 'by', code: 'invalid_query_parameter' });
      }
      const limit = q.limit === undefined ? DEFAULT_GROUPS : Number(q.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_GROUPS) {
        throw new GatewayError(400, `invalid query parameter 'limit': expected an integer 1-${MAX_GROUPS}`, { param: 'limit', code: 'invalid_query_parameter' });
      }
      const w = histogramWindow(filters);
      reply(res, 200, (await store.breakdown(filters, w, by as BreakdownBy, limit)) satisfies UsageBreakdown);
    })
    .all(methodNotAllowed);

  // The current search as a file, streamed batch by batch with backpressure (bounded memory); a
  // client that goes away stops the reading.
  router
    .route('/export')
    .get(async (req: Request, res: Response) => {
      const filters = filtersOf(req, ['format', 'sort_by', 'order']);
      const q = req.query as Record<string, unknown>;
      const format = q.format ?? 'csv';
      if (typeof format !== 'string' || !(EXPORT_FORMATS as readonly string[]).includes(format)) {
        throw new GatewayError(400, `invalid query parameter 'format': expected one of ${EXPORT_FORMATS.join(', ')}`, { param: 'format', code: 'invalid_query_parameter' });
      }
      const { sort_by, order } = parsePage({ ...(q.sort_by !== undefined && { sort_by: q.sort_by }), ...(q.order !== undefined && { order: q.order }) });
      const f = format as ExportFormat;
      const line = f === 'csv' ? csvLine : jsonLine;
      // Read the first batch before the headers, so a store failure is still a JSON error answer.
      const batches = store.scan(filters, { sort_by, order }, EXPORT_BATCH)[Symbol.asyncIterator]();
      let next = await batches.next();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      res.status(200);
      res.setHeader('content-type', CONTENT_TYPE[f]);
      res.setHeader('content-disposition', `attachment; filename="skybridge-logs-${stamp}.${f}"`);
      res.setHeader('cache-control', 'no-store');
      let gone = false;
      res.once('close', () => (gone = true));
      const write = async (text: string): Promise<void> => {
        if (!res.write(text) && !gone) await new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
      };
      try {
        if (f === 'csv') await write(csvHeader());
        while (!next.done && !gone) {
          await write(next.value.map(line).join(''));
          next = await batches.next();
        }
      } catch {
        // The store failed after the headers went out: cut the download rather than end it as if complete.
        res.destroy();
        return;
      } finally {
        if (gone) await batches.return?.();
      }
      res.end();
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get(async (req: Request, res: Response) => {
      noParams(req);
      const id = pathParam(req, 'id');
      if (id.length > MAX_ID_LENGTH) throw new GatewayError(400, `id: at most ${MAX_ID_LENGTH} characters`, { param: 'id', code: 'invalid_field' });
      const entry = await store.get(id);
      if (!entry) throw new GatewayError(404, `log '${id.slice(0, 128)}' not found`, { type: 'not_found_error', code: 'not_found' });
      reply(res, 200, entry);
    })
    .all(methodNotAllowed);

  return router;
}
