// /api/governance/{virtual-keys,teams,customers,budgets,rate-limits,model-configs,pricing-overrides}.
import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import {
  BudgetSchema, CustomerSchema, ModelConfigSchema, PricingOverrideRecordSchema, RateLimitSchema, TeamSchema, VirtualKeySchema, type Budget,
} from '../schema/governance.ts';
import { collectionRouter, type CollectionSpec, type StoredRecord } from './collection.ts';
import { applyInlineLimits, budgetErrors, expandLimits, LIMIT_RESPONSE_ONLY } from './limits.ts';
import { isMaskOf, maskSecret } from './mask.ts';
import { queryParam, without } from './http.ts';
import type { WriteContext } from './write.ts';
import { pricingRouter } from './pricing.ts';

/** The reference gateway's generated virtual keys look like this. */
export const newVirtualKeyValue = (): string => `sk-bf-${randomUUID()}`;

const withLimits = (record: StoredRecord, doc: GatewayConfig): Record<string, unknown> => ({ ...record, ...expandLimits(record, doc) });

const inlineLimits = (label: string) => (record: StoredRecord, draft: GatewayConfig, ctx: WriteContext) => applyInlineLimits(record, draft, ctx, '', label);

function prepareVirtualKey(record: StoredRecord, draft: GatewayConfig, ctx: WriteContext, stored: StoredRecord | undefined): void {
  const storedValue = typeof stored?.value === 'string' ? stored.value : undefined;
  if (record.value === undefined) record.value = storedValue ?? newVirtualKeyValue();
  // A client that read the key (value masked) and writes it back keeps the value.
  else if (storedValue !== undefined && typeof record.value === 'string' && isMaskOf(record.value, storedValue)) record.value = storedValue;
  applyInlineLimits(record, draft, ctx, '', 'virtual key');
  if (!Array.isArray(record.provider_configs)) return;
  record.provider_configs = record.provider_configs.map((pc: unknown, i: number) => {
    if (!pc || typeof pc !== 'object' || Array.isArray(pc)) return pc;
    // The reference's answers number provider configs and list their keys; neither is stored.
    const config = without(pc as Record<string, unknown>, ['id', 'virtual_key_id', 'keys', ...LIMIT_RESPONSE_ONLY]);
    applyInlineLimits(config, draft, ctx, `provider_configs[${i}]`, 'virtual key');
    return config;
  });
}

function viewVirtualKey(record: StoredRecord, doc: GatewayConfig, full: boolean): Record<string, unknown> {
  const configs = Array.isArray(record.provider_configs) ? (record.provider_configs as StoredRecord[]) : undefined;
  return {
    ...withLimits(record, doc),
    value: full ? record.value : maskSecret(String(record.value)),
    ...(configs && { provider_configs: configs.map((pc) => ({ ...pc, ...expandLimits(pc, doc) })) }),
  };
}

const byQuery = (field: string) => (list: StoredRecord[], req: Request) => {
  const want = queryParam(req, field);
  return want === undefined ? list : list.filter((r) => r[field] === want);
};

export const VIRTUAL_KEYS: CollectionSpec = {
  section: 'virtual_keys',
  kind: 'virtual_key',
  label: 'virtual key',
  singular: 'virtual_key',
  plural: 'virtual_keys',
  schema: VirtualKeySchema,
  unique: ['name', 'value'],
  responseOnly: [...LIMIT_RESPONSE_ONLY, 'team', 'customer'],
  prepare: prepareVirtualKey,
  view: (r, doc) => viewVirtualKey(r, doc, false),
  createdView: (r, doc) => viewVirtualKey(r, doc, true),
  filter: (list, req) => byQuery('customer_id')(byQuery('team_id')(list, req), req),
};

export const TEAMS: CollectionSpec = {
  section: 'teams',
  kind: 'team',
  label: 'team',
  singular: 'team',
  plural: 'teams',
  schema: TeamSchema,
  unique: ['name'],
  responseOnly: [...LIMIT_RESPONSE_ONLY, 'customer', 'virtual_keys'],
  prepare: inlineLimits('team'),
  view: withLimits,
  filter: byQuery('customer_id'),
};

export const CUSTOMERS: CollectionSpec = {
  section: 'customers',
  kind: 'customer',
  label: 'customer',
  singular: 'customer',
  plural: 'customers',
  schema: CustomerSchema,
  unique: ['name'],
  responseOnly: [...LIMIT_RESPONSE_ONLY, 'teams', 'virtual_keys'],
  prepare: inlineLimits('customer'),
  view: withLimits,
};

export const BUDGETS: CollectionSpec = {
  section: 'budgets',
  kind: 'budget',
  label: 'budget',
  singular: 'budget',
  plural: 'budgets',
  schema: BudgetSchema,
  responseOnly: LIMIT_RESPONSE_ONLY,
  check: (r) => budgetErrors(r as unknown as Budget),
  view: (r) => r,
};

export const RATE_LIMITS: CollectionSpec = {
  section: 'rate_limits',
  kind: 'rate_limit',
  label: 'rate limit',
  singular: 'rate_limit',
  plural: 'rate_limits',
  schema: RateLimitSchema,
  responseOnly: LIMIT_RESPONSE_ONLY,
  view: (r) => r,
};

export const MODEL_CONFIGS: CollectionSpec = {
  section: 'model_configs',
  label: 'model config',
  singular: 'model_config',
  plural: 'model_configs',
  schema: ModelConfigSchema,
  responseOnly: LIMIT_RESPONSE_ONLY,
  prepare: inlineLimits('model config'),
  view: withLimits,
  filter: byQuery('provider'),
};

/** Overrides of config.json's providers can only be written here (the provider itself is the file's). */
export const PRICING_OVERRIDES: CollectionSpec = {
  section: 'pricing_overrides',
  label: 'pricing override',
  singular: 'pricing_override',
  plural: 'pricing_overrides',
  schema: PricingOverrideRecordSchema,
  view: (r) => r,
  filter: byQuery('provider'),
};

export function governanceRouter(service: ConfigService): Router {
  const router = Router();
  router.use('/virtual-keys', collectionRouter(service, VIRTUAL_KEYS));
  router.use('/teams', collectionRouter(service, TEAMS));
  router.use('/customers', collectionRouter(service, CUSTOMERS));
  router.use('/budgets', collectionRouter(service, BUDGETS));
  router.use('/rate-limits', collectionRouter(service, RATE_LIMITS));
  router.use('/model-configs', collectionRouter(service, MODEL_CONFIGS));
  router.use('/pricing-overrides', collectionRouter(service, PRICING_OVERRIDES));
  router.use('/pricing', pricingRouter(service));
  return router;
}
