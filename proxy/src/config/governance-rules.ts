// Rules of the governance section that a JSON Schema cannot say: ids and names unique, every
// reference pointing at something that exists, rate limits with a window for each maximum.
import type { GatewayConfig } from '../schema/gateway.ts';
import type { FieldError } from '../schema/validate.ts';

/** Items looked at between two yields of governanceErrorSteps. */
const ITEMS_PER_STEP = 250;

export function governanceErrors(config: GatewayConfig): FieldError[] {
  const steps = governanceErrorSteps(config);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * governanceErrors as steps: it yields after each slice of a long list (10,000 virtual keys), so a
 * reload can leave the event loop free between them (config/steps.ts runInSteps); same errors, same order.
 */
export function* governanceErrorSteps(config: GatewayConfig): Generator<void, FieldError[]> {
  const g = config.governance;
  if (!g) return [];
  const errors: FieldError[] = [];
  const ids = (list: { id: string }[] | undefined) => new Set((list ?? []).map((x) => x.id));
  const budgets = ids(g.budgets);
  const rateLimits = ids(g.rate_limits);
  const teams = ids(g.teams);
  const customers = ids(g.customers);
  const providers = new Set(Object.keys(config.providers ?? {}));
  // Each provider's key names, once: thousands of virtual keys read them.
  const keyNamesByProvider = new Map<string, ReadonlySet<string>>();
  const keyNamesOf = (provider: string): ReadonlySet<string> => {
    let names = keyNamesByProvider.get(provider);
    if (!names) keyNamesByProvider.set(provider, (names = new Set((config.providers?.[provider]?.keys ?? []).map((k) => k.name))));
    return names;
  };

  const unique = function* <T>(section: string, list: T[] | undefined, field: keyof T & string, what: string = field): Generator<void, void> {
    const seen = new Set<unknown>();
    const items = list ?? [];
    for (let i = 0; i < items.length; i++) {
      if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
      const v = items[i][field];
      if (v === undefined) continue;
      if (seen.has(v)) errors.push({ path: `governance.${section}[${i}].${field}`, message: `duplicate ${what}${field === 'value' ? '' : ` '${String(v)}'`}` });
      seen.add(v);
    }
  };
  yield* unique('budgets', g.budgets, 'id');
  yield* unique('rate_limits', g.rate_limits, 'id');
  yield* unique('teams', g.teams, 'id');
  yield* unique('teams', g.teams, 'name');
  yield* unique('customers', g.customers, 'id');
  yield* unique('customers', g.customers, 'name');
  yield* unique('virtual_keys', g.virtual_keys, 'id');
  yield* unique('virtual_keys', g.virtual_keys, 'name');
  yield* unique('virtual_keys', g.virtual_keys, 'value', 'virtual key value');
  yield* unique('model_configs', g.model_configs, 'id');
  yield* unique('pricing_overrides', g.pricing_overrides, 'id');

  // Paths are spelled out only for an error: thousands of virtual keys pass on every reload.
  const ref = (at: () => string, field: string, id: string | undefined, known: Set<string>, what: string) => {
    if (id !== undefined && !known.has(id)) errors.push({ path: `${at()}.${field}`, message: `no ${what} with id '${id}'` });
  };
  const limits = (at: () => string, x: { budget_id?: string; rate_limit_id?: string }) => {
    ref(at, 'budget_id', x.budget_id, budgets, 'budget');
    ref(at, 'rate_limit_id', x.rate_limit_id, rateLimits, 'rate limit');
  };
  g.customers?.forEach((c, i) => limits(() => `governance.customers[${i}]`, c));
  g.teams?.forEach((t, i) => {
    const at = () => `governance.teams[${i}]`;
    limits(at, t);
    ref(at, 'customer_id', t.customer_id, customers, 'customer');
  });
  const virtualKeys = g.virtual_keys ?? [];
  for (let i = 0; i < virtualKeys.length; i++) {
    if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
    const vk = virtualKeys[i];
    const at = () => `governance.virtual_keys[${i}]`;
    limits(at, vk);
    ref(at, 'team_id', vk.team_id, teams, 'team');
    ref(at, 'customer_id', vk.customer_id, customers, 'customer');
    if (vk.team_id && vk.customer_id) errors.push({ path: `${at()}.customer_id`, message: 'a virtual key belongs to a team or a customer, not both (the team names its customer)' });
    vk.provider_configs?.forEach((pc, j) => {
      const pat = () => `${at()}.provider_configs[${j}]`;
      limits(pat, pc);
      if (!providers.has(pc.provider)) errors.push({ path: `${pat()}.provider`, message: `provider '${pc.provider}' is not configured` });
      const keyNames = pc.key_ids?.length ? keyNamesOf(pc.provider) : undefined;
      pc.key_ids?.forEach((k, n) => {
        if (k !== '*' && !keyNames?.has(k) && !isUuid(k)) errors.push({ path: `${pat()}.key_ids[${n}]`, message: `'${k}' is neither a key id nor the name of a key of provider '${pc.provider}'` });
      });
    });
  }
  yield;
  g.model_configs?.forEach((mc, i) => {
    limits(() => `governance.model_configs[${i}]`, mc);
    if (mc.provider !== undefined && !providers.has(mc.provider)) errors.push({ path: `governance.model_configs[${i}].provider`, message: `provider '${mc.provider}' is not configured` });
  });
  g.pricing_overrides?.forEach((o, i) => {
    const at = `governance.pricing_overrides[${i}]`;
    if (o.provider !== undefined && !providers.has(o.provider)) errors.push({ path: `${at}.provider`, message: `provider '${o.provider}' is not configured` });
    const problem = o.match_type === 'regex' ? regexProblem(o.model_pattern) : undefined;
    if (problem) errors.push({ path: `${at}.model_pattern`, message: `is not a valid regular expression: ${problem}` });
  });
  g.providers?.forEach((p, i) => {
    limits(() => `governance.providers[${i}]`, p);
    if (!providers.has(p.name)) errors.push({ path: `governance.providers[${i}].name`, message: `provider '${p.name}' is not configured` });
  });
  const rateLimitList = g.rate_limits ?? [];
  for (let i = 0; i < rateLimitList.length; i++) {
    if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
    const r = rateLimitList[i];
    const at = `governance.rate_limits[${i}]`;
    if (r.token_max_limit !== undefined && !r.token_reset_duration) errors.push({ path: `${at}.token_reset_duration`, message: 'is required with token_max_limit' });
    if (r.request_max_limit !== undefined && !r.request_reset_duration) errors.push({ path: `${at}.request_reset_duration`, message: 'is required with request_max_limit' });
    if (r.token_max_limit === undefined && r.request_max_limit === undefined) errors.push({ path: at, message: 'needs token_max_limit or request_max_limit' });
  }
  return errors;
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
