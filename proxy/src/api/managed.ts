// /api when the configuration comes from Kubernetes (ConfigService.origin()): the operator renders
// the whole document from custom resources and every replica follows it, so a write here would be
// lost on the next render and reach one replica only. Every write answers 409 saying what to edit
// instead (the custom resource, when the path names an object that came from one); objects that
// came from a custom resource are listed with `managed_by` and `source`.
import type { NextFunction, Request, Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import { conflict } from './errors.ts';

/** Reads, and the session endpoints (logging in is not a configuration change). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SESSION_PATH = /^\/api\/session(\/|$)/;
/** Writes that change no configuration: a webhook test delivery, a redelivery, a routing rule check, clearing cache entries. */
const ACTION_PATH = /^\/api\/(webhooks\/(deliveries\/[^/]+\/redeliver|[^/]+\/test)|(routing\/rules|governance\/routing-rules)\/(validate|test)|cache\/(clear|clear-by-key)\/[^/]+)$/;

/** The API's collection paths → the document section named in index.json `sources`. */
const SECTIONS: ReadonlyArray<readonly [RegExp, string, string]> = [
  [/^\/api\/providers\/([^/]+)/, 'providers', 'provider'],
  [/^\/api\/governance\/virtual-keys\/([^/]+)/, 'virtual_keys', 'virtual key'],
  [/^\/api\/governance\/teams\/([^/]+)/, 'teams', 'team'],
  [/^\/api\/governance\/customers\/([^/]+)/, 'customers', 'customer'],
  [/^\/api\/governance\/budgets\/([^/]+)/, 'budgets', 'budget'],
  [/^\/api\/governance\/rate-limits\/([^/]+)/, 'rate_limits', 'rate limit'],
  [/^\/api\/governance\/model-configs\/([^/]+)/, 'model_configs', 'model config'],
  [/^\/api\/governance\/routing-rules\/([^/]+)/, 'routing_rules', 'routing rule'],
  [/^\/api\/routing\/rules\/([^/]+)/, 'routing_rules', 'routing rule'],
  [/^\/api\/plugins\/([^/]+)/, 'plugins', 'plugin'],
  [/^\/api\/webhooks\/(?!deliveries(?:\/|$))([^/]+)/, 'webhooks', 'webhook'],
];

/** Resource plurals of the gateway.skybridge.dev kinds, for a kubectl command line. */
const PLURALS: Readonly<Record<string, string>> = {
  Provider: 'providers',
  VirtualKey: 'virtualkeys',
  RoutingRule: 'routingrules',
  Webhook: 'webhooks',
  MCPClient: 'mcpclients',
  CachePolicy: 'cachepolicies',
};

/** `VirtualKey team-a/checkout` → `kubectl edit virtualkeys.gateway.skybridge.dev checkout -n team-a`. */
function kubectlEdit(source: string): string | undefined {
  const m = /^(\w+) ([^/\s]+)\/(\S+)$/.exec(source);
  const plural = m && PLURALS[m[1]];
  return plural ? `kubectl edit ${plural}.gateway.skybridge.dev ${m[3]} -n ${m[2]}` : undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Refuses every configuration write with 409 while an external source owns the document. */
export function refuseManagedWrites(service: ConfigService) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const origin = service.origin();
    if (!origin || SAFE_METHODS.has(req.method) || SESSION_PATH.test(req.originalUrl.split('?')[0]) || ACTION_PATH.test(req.originalUrl.split('?')[0])) return next();
    req.resume();
    const path = req.originalUrl.split('?')[0];
    for (const [pattern, section, label] of SECTIONS) {
      const m = pattern.exec(path);
      if (!m) continue;
      const id = decode(m[1]);
      const source = origin.sources[`${section}/${id}`];
      if (!source) break;
      const edit = kubectlEdit(source);
      throw conflict(`${label} '${id}' is managed by Kubernetes (${source}) and read-only here: edit ${source}${edit ? ` (${edit})` : ''}`);
    }
    throw conflict(`the configuration is managed by Kubernetes and /api is read-only: change ${origin.editWith}`);
  };
}

/** `view` with `managed_by` and `source` when the object came from a custom resource. */
export function markManaged(service: ConfigService, section: string, id: string, view: Record<string, unknown>): Record<string, unknown> {
  const source = service.origin()?.sources[`${section}/${id}`];
  return source ? { ...view, managed_by: 'kubernetes', source } : view;
}
