// Versioned schema of the request-log store. Append a migration, never edit one that shipped: a
// store records the versions it applied (logs_schema_migrations) and applies only the missing ones.
import type { Migration } from './driver.ts';
import { MCP_TOOL_LOGS_MIGRATION } from './mcp-migration.ts';
import { SKILLS_MIGRATION } from './skills-migration.ts';
import { VIDEOS_MIGRATION } from './videos-migration.ts';
import { AUDIT_MIGRATION } from './audit-migration.ts';
import { REQUEST_ID_MIGRATION } from './request-id-migration.ts';
import { USAGE_BREAKDOWN_MIGRATION } from './usage-migration.ts';
import { USAGE_ROLLUP_MIGRATION } from './usage-rollup.ts';
import { USAGE_DIMENSIONS_MIGRATION } from './usage-dimensions.ts';
import { contentSearchStatements } from './content-search.ts';
import { rollupStatements, topLevelRollupStatements } from './rollup.ts';

export type { Migration };

export const MIGRATIONS_TABLE = 'logs_schema_migrations';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'logs and their routing rules, indexed for the /api/logs filters',
    statements: (d) => [
      `CREATE TABLE logs (
        id TEXT PRIMARY KEY,
        parent_request_id TEXT,
        timestamp BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        object TEXT NOT NULL,
        provider TEXT,
        model TEXT,
        requested_model TEXT,
        virtual_key_id TEXT,
        virtual_key_name TEXT,
        team_id TEXT,
        customer_id TEXT,
        selected_key_id TEXT,
        selected_key_name TEXT,
        routing_rule_id TEXT,
        routing_rule_ids TEXT,
        routing_rule_name TEXT,
        routing_engines INTEGER NOT NULL DEFAULT 0,
        routing_engine_logs TEXT,
        number_of_retries INTEGER NOT NULL DEFAULT 0,
        fallback_index INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        error_details TEXT,
        stream INTEGER NOT NULL DEFAULT 0,
        prompt_tokens BIGINT NOT NULL DEFAULT 0,
        completion_tokens BIGINT NOT NULL DEFAULT 0,
        cached_tokens BIGINT NOT NULL DEFAULT 0,
        total_tokens BIGINT NOT NULL DEFAULT 0,
        cost ${d.double},
        latency ${d.double},
        ttft ${d.double},
        cache_debug TEXT,
        metadata TEXT,
        input_content TEXT,
        output_content TEXT
      )`,
      // A request may pass several rules; one row per (rule, request) keeps the rule filter indexed.
      `CREATE TABLE log_routing_rules (
        rule_id TEXT NOT NULL,
        log_id TEXT NOT NULL,
        timestamp BIGINT NOT NULL,
        PRIMARY KEY (rule_id, log_id)
      )`,
      'CREATE INDEX log_routing_rules_log ON log_routing_rules (log_id)',
      'CREATE INDEX log_routing_rules_time ON log_routing_rules (timestamp)',
      // (timestamp, id) serves the default newest-first page without a sort.
      'CREATE INDEX logs_time ON logs (timestamp, id)',
      'CREATE INDEX logs_provider_time ON logs (provider, timestamp)',
      'CREATE INDEX logs_model_time ON logs (model, timestamp)',
      'CREATE INDEX logs_status_time ON logs (status, timestamp)',
      'CREATE INDEX logs_object_time ON logs (object, timestamp)',
      'CREATE INDEX logs_vk_time ON logs (virtual_key_id, timestamp)',
      'CREATE INDEX logs_key_time ON logs (selected_key_id, timestamp)',
      'CREATE INDEX logs_rule_time ON logs (routing_rule_id, timestamp)',
      'CREATE INDEX logs_parent ON logs (parent_request_id)',
    ],
  },
  {
    version: 2,
    description: 'async inference jobs (async/job-store.ts), claimed with leases by any replica',
    statements: () => [
      `CREATE TABLE async_jobs (
        id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        path TEXT NOT NULL,
        request_type TEXT NOT NULL,
        status TEXT NOT NULL,
        virtual_key_id TEXT,
        request_body TEXT,
        request_headers TEXT,
        webhook TEXT,
        webhook_state TEXT,
        created_at BIGINT NOT NULL,
        ttl_seconds INTEGER NOT NULL,
        expires_at BIGINT NOT NULL,
        started_at BIGINT,
        completed_at BIGINT,
        status_code INTEGER,
        result TEXT,
        error TEXT,
        lease_id TEXT,
        lease_owner TEXT,
        lease_until BIGINT,
        attempts INTEGER NOT NULL DEFAULT 0,
        expired INTEGER NOT NULL DEFAULT 0
      )`,
      // Claims look for pending jobs and lapsed leases, oldest first.
      'CREATE INDEX async_jobs_claim ON async_jobs (status, created_at)',
      'CREATE INDEX async_jobs_expiry ON async_jobs (expires_at)',
    ],
  },
  {
    version: 3,
    description: 'webhook delivery queue, attempts and generated signing secrets',
    statements: (d) => [
      // One row per delivery (the webhook-id); `state` pending rows are the queue, claimed with a
      // lease (lease_token) so a dead node's claim expires and another node takes it over.
      `CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        endpoint TEXT NOT NULL,
        event TEXT NOT NULL,
        job_id TEXT,
        data TEXT NOT NULL,
        result_expires_at BIGINT,
        state TEXT NOT NULL,
        send_no INTEGER NOT NULL DEFAULT 1,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at BIGINT NOT NULL,
        lease_token TEXT,
        lease_until BIGINT,
        last_status INTEGER,
        last_error TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )`,
      `CREATE TABLE webhook_attempts (
        delivery_id TEXT NOT NULL,
        send_no INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        started_at BIGINT NOT NULL,
        duration_ms ${d.double},
        status_code INTEGER,
        outcome TEXT NOT NULL,
        error TEXT,
        response_body TEXT,
        node TEXT,
        PRIMARY KEY (delivery_id, send_no, attempt)
      )`,
      `CREATE TABLE webhook_secrets (
        name TEXT PRIMARY KEY,
        secret TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      )`,
      'CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, endpoint, next_attempt_at)',
      'CREATE INDEX webhook_deliveries_endpoint_time ON webhook_deliveries (endpoint, created_at)',
      'CREATE INDEX webhook_deliveries_time ON webhook_deliveries (created_at)',
      'CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id)',
    ],
  },
  {
    version: 4,
    description: 'request logs at scale: hourly and 6-hourly roll-ups, covering and range indexes, indexed content search',
    statements: (d) => [
      // Time-bounded aggregates (stats, short-range histograms, the roll-up's partial hours) read
      // this index alone instead of the wide records.
      'CREATE INDEX logs_time_cover ON logs (timestamp, provider, model, object, status, prompt_tokens, completion_tokens, total_tokens, cost, latency)',
      // The range filters (and the missing-cost filter) on their own, and sort_by latency/tokens/cost
      // in the default descending order with unknown values last (SQLite's native DESC order).
      `CREATE INDEX logs_latency ON logs ${d.name === 'postgres' ? '(latency DESC NULLS LAST, id DESC)' : '(latency, id)'}`,
      'CREATE INDEX logs_tokens ON logs (total_tokens, id)',
      `CREATE INDEX logs_cost ON logs ${d.name === 'postgres' ? '(cost DESC NULLS LAST, id DESC)' : '(cost, id)'}`,
      ...rollupStatements(d),
      ...contentSearchStatements(d),
    ],
  },
  MCP_TOOL_LOGS_MIGRATION,
  {
    version: 6,
    description: 'SQLite: roll-ups fed per inserted batch (one grouped upsert) instead of four upserts per record',
    statements: (d) => (d.name === 'sqlite' ? ['DROP TRIGGER IF EXISTS logs_rollup_insert'] : []),
  },
  {
    version: 7,
    description: 'roll-ups count top-level records only: a child record (an agent turn) is part of its parent request',
    statements: (d) => topLevelRollupStatements(d),
  },
  SKILLS_MIGRATION,
  VIDEOS_MIGRATION,
  AUDIT_MIGRATION,
  REQUEST_ID_MIGRATION,
  USAGE_BREAKDOWN_MIGRATION,
  USAGE_ROLLUP_MIGRATION,
  USAGE_DIMENSIONS_MIGRATION,
  {
    version: 15,
    description: "the logs' totals roll-ups count a cache hit's price as saved, not spent (hit records now carry the stored answer's price)",
    statements: (d) => topLevelRollupStatements(d, true),
  },
];
