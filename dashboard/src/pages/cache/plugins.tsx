// The plugins of the config document (/api/plugins) with their real status and an enable toggle:
// a toggle takes effect on the next request (a new snapshot gets a new stage list).
import { useEffect, useState } from 'preact/hooks';
import { put } from '../../lib/api.ts';
import { useAction } from '../../lib/hooks.ts';
import { ErrorBox, Table } from '../../ui/components.tsx';
import type { PluginView } from '../../../../proxy/src/api/answers.ts';

const BADGE: Record<string, string> = { active: 'badge-ok', disabled: 'badge-muted', error: 'badge-error' };

export function PluginList(props: { plugins: PluginView[]; readOnly: boolean; onChanged: () => void }) {
  const toggle = useAction(async (p: PluginView, enabled: boolean) => {
    await put(`/api/plugins/${encodeURIComponent(p.name)}`, { enabled });
    props.onChanged();
    return true as const;
  });
  return (
    <>
      <ErrorBox error={toggle.error} />
      <Table<PluginView>
        caption="Plugins"
        rows={props.plugins}
        rowKey={(p) => p.name}
        empty="No plugin configured."
        columns={[
          { label: 'Plugin', render: (p) => <span class="mono">{p.name}</span> },
          {
            label: 'Status',
            render: (p) => (
              <>
                <span class={`badge ${BADGE[p.status.status] ?? 'badge-muted'}`} data-testid={`plugin-status-${p.name}`}>
                  {p.status.status}
                </span>
                {p.status.logs.length > 0 && <span class="muted"> {p.status.logs.join('; ')}</span>}
              </>
            ),
          },
          { label: 'Placement', render: (p) => p.placement ?? 'post_builtin' },
          { label: 'Order', numeric: true, render: (p) => String(p.order ?? 0) },
          { label: 'Enabled', render: (p) => <PluginToggle plugin={p} disabled={props.readOnly || toggle.busy || p.managed_by !== undefined} onToggle={(on) => toggle.run(p, on)} /> },
        ]}
      />
    </>
  );
}

/** The box shows the new state at once; a refused change puts it back to what is stored. */
function PluginToggle(props: { plugin: PluginView; disabled: boolean; onToggle: (on: boolean) => Promise<true | undefined> }) {
  const stored = props.plugin.enabled;
  const [on, setOn] = useState(stored);
  useEffect(() => setOn(stored), [stored]);
  return (
    <label class="checkbox">
      <input
        type="checkbox"
        checked={on}
        disabled={props.disabled}
        aria-label={`Enable ${props.plugin.name}`}
        onChange={(e) => {
          const next = (e.currentTarget as HTMLInputElement).checked;
          setOn(next);
          void props.onToggle(next).then((ok) => ok || setOn(stored));
        }}
      />
      <span>{on ? 'on' : 'off'}</span>
    </label>
  );
}
