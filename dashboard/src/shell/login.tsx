// The login form. The gateway answers POST /api/session/login with an HttpOnly session cookie; the
// token in the answer's body is deliberately dropped, so no script can read a credential.
import { useEffect, useRef, useState } from 'preact/hooks';
import { post } from '../lib/api.ts';
import { Button, ErrorBox, Field, TextInput } from '../ui/components.tsx';
import { BrandMark } from './brand.tsx';

export function LoginPage(props: { onLoggedIn: () => void; expired?: boolean }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    form.current?.querySelector('input')?.focus();
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await post('/api/session/login', { username, password });
      setPassword('');
      props.onLoggedIn();
    } catch (err) {
      setError(err);
      setPassword('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="login" id="main">
      <div class="login-card">
        <h1>
          <BrandMark /> Skybridge
        </h1>
        {props.expired && !error && <p class="muted">Your session ended. Log in again to continue.</p>}
        <form ref={form} onSubmit={submit} aria-label="Log in" noValidate>
          <Field label="Username">
            <TextInput name="username" value={username} onInput={setUsername} autoComplete="username" required />
          </Field>
          <Field label="Password">
            <TextInput name="password" type="password" value={password} onInput={setPassword} autoComplete="current-password" required />
          </Field>
          <ErrorBox error={error} />
          <Button type="submit" kind="primary" disabled={busy}>
            {busy ? 'Logging in…' : 'Log in'}
          </Button>
        </form>
      </div>
    </main>
  );
}
