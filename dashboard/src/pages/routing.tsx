// Routing rules: listed by scope in the order the engine evaluates them (a request checks its
// virtual key's rules, then its team's, its customer's, then the global ones; within a scope by
// priority, then name). Create and edit with the CEL checked as it is typed, a "Test this rule" box
// run by the gateway's routing engine, and delete. Read-only when Kubernetes owns the rules.
import { useState } from 'preact/hooks';
import { del, get } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { Button, ErrorBox, Loading, Modal, PageHeader, ReadOnlyBanner, Table } from '../ui/components.tsx';
import type { PageProps } from './types.ts';
import { RuleForm, type ScopeChoices } from './routing/rule-form.tsx';
import { RuleTester, type TesterOptions } from './routing/tester.tsx';
import { fallbackText, SCOPES, targetText } from './routing/types.ts';
import { ConfirmDelete } from './shared/confirm-delete.tsx';
import './routing.css';
import type { RuleView as Rule } from '../../../proxy/src/api/answers.ts';

interface Named {
  id: string;
  name: string;
}

/** Providers, virtual keys, teams and customers, for the form's choices; a list that fails to load is just empty. */
async function loadChoices(): Promise<{ options: TesterOptions; scopes: ScopeChoices }> {
  const [providers, vks, teams, customers] = await Promise.all([
    get<{ providers: Array<{ name?: string; provider?: string }> }>('/api/providers').catch(() => ({ providers: [] })),
    get<{ virtual_keys: Named[] }>('/api/governance/virtual-keys').catch(() => ({ virtual_keys: [] })),
    get<{ teams: Named[] }>('/api/governance/teams').catch(() => ({ teams: [] })),
    get<{ customers: Named[] }>('/api/governance/customers').catch(() => ({ customers: [] })),
  ]);
  const names = providers.providers.map((p) => p.name ?? p.provider ?? '').filter(Boolean);
  const vk = vks.virtual_keys.map((v) => ({ id: v.id, name: v.name }));
  return {
    options: { providers: names, virtualKeys: vk },
    scopes: { virtual_key: vk, team: teams.teams.map((t) => ({ id: t.id, name: t.name })), customer: customers.customers.map((c) => ({ id: c.id, name: c.name })) },
  };
}

const byEngineOrder = (a: Rule, b: Rule) => (a.priority ?? 0) - (b.priority ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

type Editing = { rule?: Rule } | undefined;

export function RoutingPage(props: PageProps) {
  const readOnly = props.info.read_only;
  const rules = useAsync(() => get<{ rules: Rule[]; count: number }>('/api/routing/rules'), []);
  const choices = useAsync(loadChoices, []);
  const [editing, setEditing] = useState<Editing>(undefined);
  const [deleting, setDeleting] = useState<Rule | undefined>(undefined);

  const list = rules.data?.rules ?? [];
  const scopeName = (scope: keyof ScopeChoices, id: string | null) => choices.data?.scopes[scope].find((x) => x.id === id)?.name ?? id ?? '';
  const options = choices.data?.options ?? { providers: [], virtualKeys: [] };
  const scopes = choices.data?.scopes ?? { customer: [], team: [], virtual_key: [] };

  return (
    <div class="rc">
      <PageHeader title="Routing rules">
        <Button kind="primary" onClick={() => setEditing({})} disabled={readOnly}>
          New rule
        </Button>
      </PageHeader>
      {readOnly && <ReadOnlyBanner reason={props.info.read_only_reason} kind="RoutingRule" />}
      <p class="muted">
        A request is checked against its virtual key’s rules, then its team’s, its customer’s, then the global rules; within a scope by priority (lowest first). The first rule whose CEL expression
        matches picks the target.
      </p>
      <ErrorBox error={rules.error} />
      {rules.loading && !rules.data ? (
        <Loading />
      ) : (
        SCOPES.map((s) => {
          const inScope = list.filter((r) => r.scope === s.value).sort(byEngineOrder);
          if (inScope.length === 0 && s.value !== 'global') return null;
          return (
            <section aria-labelledby={`rc-scope-${s.value}`}>
              <h2 id={`rc-scope-${s.value}`}>
                {s.label} rules <span class="muted">({inScope.length})</span>
              </h2>
              <Table<Rule>
                caption={`${s.label} routing rules`}
                rows={inScope}
                rowKey={(r) => r.id}
                empty="No rule in this scope yet."
                columns={[
                  { label: 'Priority', numeric: true, render: (r) => String(r.priority ?? 0) },
                  {
                    label: 'Name',
                    render: (r) => (
                      <>
                        {r.name}
                        {r.enabled === false && <span class="badge badge-muted rc-gap">disabled</span>}
                        {r.chain_rule && <span class="badge badge-warn rc-gap">chain</span>}
                        {r.source && <span class="badge badge-readonly rc-gap" title={r.source}>{r.managed_by === 'file' ? 'config.json' : r.source}</span>}
                        {r.error && (
                          <span class="badge badge-warn rc-gap" title={r.error} data-testid="rule-error">
                            skipped: {r.error}
                          </span>
                        )}
                      </>
                    ),
                  },
                  ...(s.value === 'global' ? [] : [{ label: 'Applies to', render: (r: Rule) => scopeName(s.value as keyof ScopeChoices, r.scope_id) }]),
                  { label: 'Expression', render: (r) => (r.cel_expression ? <code class="rc-expr">{r.cel_expression}</code> : <span class="muted">always</span>) },
                  { label: 'Targets', render: (r) => r.targets.map((t) => `${targetText(t)}${r.targets.length > 1 ? ` ×${t.weight}` : ''}`).join(', ') },
                  { label: 'Fallbacks', render: (r) => (r.fallbacks ?? []).map(fallbackText).join(', ') || '—' },
                  {
                    label: 'Actions',
                    render: (r) => (
                      <span class="rc-actions">
                        <Button onClick={() => setEditing({ rule: r })} label={`${readOnly ? 'View' : 'Edit'} ${r.name}`}>
                          {readOnly ? 'View' : 'Edit'}
                        </Button>
                        {!readOnly && (
                          <Button kind="danger" onClick={() => setDeleting(r)} label={`Delete ${r.name}`}>
                            Delete
                          </Button>
                        )}
                      </span>
                    ),
                  },
                ]}
              />
            </section>
          );
        })
      )}
      <RuleTester options={options} title="Test the rule set" />
      {editing && (
        <Modal title={editing.rule ? `Rule ${editing.rule.name}` : 'New routing rule'} onClose={() => setEditing(undefined)}>
          {readOnly ? (
            <ReadOnlyRule rule={editing.rule} options={options} />
          ) : (
            <RuleForm
              rule={editing.rule}
              options={options}
              scopes={scopes}
              onCancel={() => setEditing(undefined)}
              onSaved={() => {
                setEditing(undefined);
                rules.reload();
              }}
            />
          )}
        </Modal>
      )}
      {deleting && (
        <ConfirmDelete
          what={`rule ${deleting.name}`}
          confirmLabel="Delete rule"
          onConfirm={() => del(`/api/routing/rules/${encodeURIComponent(deleting.id)}`)}
          onClose={() => setDeleting(undefined)}
          onDone={() => (setDeleting(undefined), rules.reload())}
        >
          Requests stop being routed by this rule at once.
        </ConfirmDelete>
      )}
    </div>
  );
}

/** Kubernetes mode: the rule as stored, and the tester (testing changes nothing). */
function ReadOnlyRule(props: { rule?: Rule; options: TesterOptions }) {
  const r = props.rule;
  if (!r) return null;
  return (
    <div class="stack">
      <dl class="kv">
        <dt>Scope</dt>
        <dd>{r.scope === 'global' ? 'global' : `${r.scope} ${r.scope_id ?? ''}`}</dd>
        <dt>Priority</dt>
        <dd>{r.priority ?? 0}</dd>
        <dt>Expression</dt>
        <dd>
          <code>{r.cel_expression || '(always)'}</code>
        </dd>
        <dt>Targets</dt>
        <dd>{r.targets.map(targetText).join(', ')}</dd>
        {r.source && (
          <>
            <dt>Source</dt>
            <dd>{r.source}</dd>
          </>
        )}
      </dl>
      <RuleTester options={props.options} title="Test this rule" />
    </div>
  );
}
