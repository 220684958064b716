// /api when the configuration comes from Kubernetes (ConfigService.origin()): the operator renders
// the whole document from custom resources and every replica follows it, so a write here would be
// lost on the next render and reach one replica only. Every write answers 409 saying what to edit
// instead (the custom resource, when the path names an object that came from one); objects that
// came from a custom resource are listed with `managed_by` and `source`.
// Outside Kubernetes the same holds per object: an object of config.json (or of the environment)
// is read-only here (409 naming the file), one created through /api is the store's to change.
import type { NextFunction, Request, Response } from 'express';
import { SeedManagedError, type ConfigService } from '../config/service.ts';
import { conflict } from './errors.ts';
import type { Owned } from './answers.ts';

/** Reads, and the session endpoints (logging in is not a configuration change). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SESSION_PATH = /^\/api\/session(\/|$)/;
/** Writes that change no configuration: a webhook test delivery, a redelivery, a routing rule check, clearing cache entries, a playground request. */
const ACTION_PATH = /^\/api\/(playground|webhooks\/(deliveries\/[^/]+\/redeliver|[^/]+\/test)|(routing\/rules|governance\/routing-rules)\/(validate|test)|cache\/(clear|clear-by-key)\/[^/]+)$/;

/** Data kept in the logs store, not configuration: the skills repository is written through /api in every mode. */
const DATA_PATH = /^\/api\/skills(\/|$)/;
/** The API's collection paths → the document section named in index.json `sources`. */
const SECTIONS: ReadonlyArray<readonly [RegExp, string, string]> = [
  [/^\/api\/providers\/([^/]+)/, 'providers', 'provider'],
  [/^\/api\/governance\/virtual-keys\/([^/]+)/, 'virtual_keys', 'virtual key'],
  [/^\/api\/governance\/teams\/([^/]+)/, 'teams', 'team'],
  [/^\/api\/governance\/customers\/([^/]+)/, 'customers', 'customer'],
  [/^\/api\/governance\/budgets\/([^/]+)/, 'budgets', 'budget'],
  [/^\/api\/governance\/rate-limits\/([^/]+)/, 'rate_limits', 'rate limit'],
  [/^\/api\/governance\/model-configs\/([^/]+)/, 'model_configs', 'model config'],
  [/^\/api\/governance\/pricing-overrides\/([^/]+)/, 'pricing_overrides', 'pricing override'],
  [/^\/api\/governance\/routing-rules\/([^/]+)/, 'routing_rules', 'routing rule'],
  [/^\/api\/routing\/rules\/([^/]+)/, 'routing_rules', 'routing rule'],
  [/^\/api\/plugins\/([^/]+)/, 'plugins', 'plugin'],
  [/^\/api\/webhooks\/(?!deliveries(?:\/|$))([^/]+)/, 'webhooks', 'webhook'],
  [/^\/api\/mcp\/client\/([^/]+)/, 'mcp_clients', 'MCP client'],
];

/** Resource plurals of the gateway.skybridge.dev kinds, for a kubectl command line. */
const PLURALS: Readonly<Record<string, string>> = {
  Provider: 'providers',
  VirtualKey: 'virtualkeys',
  RoutingRule: 'routingrules',
  Webhook: 'webhooks',
  MCPClient: 'mcpclients',
  CachePolicy: 'cachepolicies',
  Team: 'teams',
  Customer: 'customers',
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

/**
 * Refuses every configuration write with 409 while an external source owns the document, and a
 * write to an object of config.json (or the environment) otherwise. The config service refuses the
 * latter too, whatever path a change takes (seed objects must come out of a write unchanged); this
 * answers before the body is read, for the paths that name one object.
 */
export function refuseManagedWrites(service: ConfigService) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const origin = service.origin();
    const path = req.originalUrl.split('?')[0];
    if (SAFE_METHODS.has(req.method) || SESSION_PATH.test(path) || ACTION_PATH.test(path) || DATA_PATH.test(path)) return next();
    if (!origin) return refuseSeedObject(service, req, path, next);
    req.resume();
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

function refuseSeedObject(service: ConfigService, req: Request, path: string, next: NextFunction): void {
  for (const [pattern, section] of SECTIONS) {
    const m = pattern.exec(path);
    if (!m) continue;
    const id = decode(m[1]);
    const owner = service.ownerOf(section, id);
    if (owner?.owner !== 'file' && owner?.owner !== 'environment') break;
    req.resume();
    throw conflict(new SeedManagedError(section, id, { kind: owner.owner, source: owner.source ?? '' }).message);
  }
  next();
}

/**
 * `view` with its `owner` (`file`, `environment`, `store` or `kubernetes`); a read-only one also
 * with `managed_by` and `source` (the file, the custom resource), as the dashboard reads them.
 */
export function markManaged<T extends object>(service: ConfigService, section: string, id: string, view: T): T & Owned & { owner?: string } {
  const owner = service.ownerOf(section, id);
  if (!owner) return view;
  if (owner.owner === 'store') return { ...view, owner: 'store' };
  return { ...view, owner: owner.owner, managed_by: owner.owner, source: owner.source };
}
