// Create / edit a team or a customer: name, (a team's) customer, and inline budget and rate limit.
import { useState } from 'preact/hooks';
import { Field, Select } from '../../ui/components.tsx';
import { EditForm, TextField } from '../../ui/form.tsx';
import { post, put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { LimitsFields, limitsBody, limitsDraft } from '../budgets/limits.tsx';
import { fieldError } from '../budgets/model.ts';
import type { CustomerView as Customer, TeamView as Team } from '../../../../proxy/src/api/answers.ts';

export type Kind = 'team' | 'customer';
const PATH: Record<Kind, string> = { team: '/api/governance/teams', customer: '/api/governance/customers' };

export function TeamForm(props: { kind: Kind; record: Team | Customer | undefined; customers: Customer[]; onSaved: () => void; onCancel: () => void }) {
  const { kind, record } = props;
  const [name, setName] = useState(record?.name ?? '');
  const [customer, setCustomer] = useState((record as Team | undefined)?.customer_id ?? '');
  const [limits, setLimits] = useState(limitsDraft(record));
  const had = (record as Team | undefined)?.customer_id;

  const save = useAction(async () => {
    const body: Record<string, unknown> = { name, ...limitsBody(limits, record) };
    if (kind === 'team') {
      if (customer) body.customer_id = customer;
      else if (had) body.customer_id = null;
    }
    return record ? put(`${PATH[kind]}/${encodeURIComponent(record.id)}`, body) : post(PATH[kind], body);
  });
  const err = (p: string) => fieldError(save.error, p);
  return (
    <EditForm save={save} onSaved={props.onSaved} submitLabel={record ? 'Save' : `Create ${kind}`} onCancel={props.onCancel}>
      <div class="form-grid">
        <TextField label="Name" value={name} onInput={setName} name="name" error={err('name')} />
        {kind === 'team' && (
          <Field label="Customer" error={err('customer_id')}>
            <Select value={customer} onChange={setCustomer} options={[{ value: '', label: 'None' }, ...props.customers.map((c) => ({ value: c.id, label: c.name }))]} name="customer_id" />
          </Field>
        )}
      </div>
      <LimitsFields draft={limits} onChange={setLimits} error={save.error} />
    </EditForm>
  );
}
