import type { ComponentType } from 'preact';

/** What GET /api/dashboard tells the shell (see proxy/src/dashboard/info.ts). */
export interface GatewayInfo {
  version: string;
  /** Configuration source: 'file' (config.json / embedded defaults, editable) or 'kubernetes'. */
  mode: string;
  /** True when every configuration write answers 409 (Kubernetes mode). */
  read_only: boolean;
  /** Why, and what to edit instead, shown in the banner. */
  read_only_reason?: string;
  auth_enabled: boolean;
  features: { logs: boolean; cache: boolean; mcp: boolean; webhooks: boolean; async: boolean };
  /** Configuration problems shown as a banner on every page: writes kept in memory only, objects set aside, rules skipped. */
  config_notices?: string[];
}

export interface PageProps {
  /** Path segments after the page's own (`#/logs/abc` → ['abc']). */
  rest: string[];
  /** The hash's query (`#/logs?model=gpt-4o`). */
  params: URLSearchParams;
  info: GatewayInfo;
}

export interface PageDef {
  /** First hash path segment: `#/<path>`. */
  path: string;
  title: string;
  component: ComponentType<PageProps>;
}
