// GET /api/dashboard: what the dashboard shell needs to know before drawing a page — the version,
// where the configuration comes from (and so whether the page may write), whether login is needed,
// and which optional subsystems run here (a page for one that is off says so instead of failing).
import type { ConfigOrigin } from '../config/service.ts';

export interface DashboardFeatures {
  logs: boolean;
  cache: boolean;
  mcp: boolean;
  webhooks: boolean;
  async: boolean;
}

/** The shape of dashboard/src/pages/types.ts `GatewayInfo`. */
export interface GatewayInfo {
  version: string;
  mode: 'file' | 'kubernetes';
  read_only: boolean;
  read_only_reason?: string;
  auth_enabled: boolean;
  features: DashboardFeatures;
}

export function gatewayInfo(opts: { version: string; origin: ConfigOrigin | undefined; authEnabled: boolean; features: DashboardFeatures }): GatewayInfo {
  const { origin } = opts;
  return {
    version: opts.version,
    mode: origin ? 'kubernetes' : 'file',
    read_only: origin !== undefined,
    ...(origin && { read_only_reason: `the configuration is managed by ${origin.managedBy}: change ${origin.editWith}; this dashboard can read it but not write it` }),
    auth_enabled: opts.authEnabled,
    features: { ...opts.features },
  };
}
