// Versioned schema of the request-log store. Append a migration, never edit one that shipped: a
// store records the versions it applied (logs_schema_migrations) and applies only the missing ones.
import type { Migration } from './driver.ts';

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
];
