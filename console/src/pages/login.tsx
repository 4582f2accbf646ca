// Sign in with the authentication service (spec 4.1, POST /auth/authorize).
import { useState } from 'preact/hooks';
import { login } from '../api';
import { Alert, Field } from '../components/ui';
import { useAction } from '../hooks';

export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(() => login(email.trim(), password));
  };
  return (
    <main class="login">
      <form class="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Engine console</h1>
        <Field label="Email">
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field label="Password">
          <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <Alert error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
