// Shown on the first visits while no password protects the management API and the dashboard: they
// answer this machine only, and the way to open them to a team is a password, so the banner says how.
// Dismissed once per browser (localStorage), as it repeats what the operator now knows.
import { useState } from 'preact/hooks';

const DISMISSED = 'skybridge.no-password-hint.dismissed';

function dismissedBefore(): boolean {
  try {
    return localStorage.getItem(DISMISSED) === '1';
  } catch {
    return false;
  }
}

export function NoPasswordHint(props: { authEnabled: boolean; readOnly: boolean }) {
  const [hidden, setHidden] = useState(dismissedBefore);
  if (props.authEnabled || hidden) return null;
  const dismiss = () => {
    try {
      localStorage.setItem(DISMISSED, '1');
    } catch {
      // Private mode: hidden for this visit only.
    }
    setHidden(true);
  };
  return (
    <div class="banner banner-info first-run" role="region" aria-label="Protect this dashboard">
      <p>
        <strong>No password is set</strong>, so this dashboard and <code>/api</code> answer only on this machine. To set one, add to config.json{' '}
        <code>{'"governance": { "auth_config": { "is_enabled": true, "admin_username": "admin", "admin_password": "env.ADMIN_PASSWORD" } }'}</code>{' '}
        {props.readOnly ? '(in Kubernetes: the chart’s SKYBRIDGE_ADMIN_USERNAME and SKYBRIDGE_ADMIN_PASSWORD)' : 'and set ADMIN_PASSWORD in the gateway’s environment'}; the dashboard then asks for it.
      </p>
      <button type="button" class="btn" onClick={dismiss}>
        Got it
      </button>
    </div>
  );
}
