// GET /api/dashboard: what the dashboard shell needs to know before drawing a page — the version,
// where the configuration comes from (and so whether the page may write), whether login is needed,
// and which optional subsystems run here (a page for one that is off says so instead of failing).
import type { ConfigOrigin, ConfigStatus } from '../config/service.ts';
import type { DashboardFeatures, GatewayInfo } from './answers.ts';

/** The banner lines: writes that will not survive a restart, objects created here and not served. */
export function configNotices(status: ConfigStatus | undefined): string[] {
  if (!status) return [];
  const notices: string[] = [];
  if (status.seed.kind !== 'kubernetes' && !status.store.persistent) {
    notices.push('Changes made here live in memory only and are lost when the gateway restarts: start it with --app-dir (or configure redis) to keep them.');
  }
  for (const r of status.skipped_routing_rules) notices.push(`The routing rule '${r.name}' is skipped: ${r.error}.`);
  for (const s of status.set_aside) notices.push(`The ${s.label} '${s.id}' created here is not served: ${s.reason}. Rename or remove one of the two.`);
  return notices;
}

export function gatewayInfo(opts: { version: string; origin: ConfigOrigin | undefined; authEnabled: boolean; features: DashboardFeatures; status?: ConfigStatus }): GatewayInfo {
  const { origin } = opts;
  return {
    version: opts.version,
    mode: origin ? 'kubernetes' : 'file',
    read_only: origin !== undefined,
    ...(origin && { read_only_reason: `the configuration is managed by ${origin.managedBy}: change ${origin.editWith}; this dashboard can read it but not write it` }),
    auth_enabled: opts.authEnabled,
    features: { ...opts.features },
    config_notices: configNotices(opts.status),
  };
}
