import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api } from '../api/endpoints';
import { ErrorNotice } from '../components/ErrorNotice';
import { InputField } from '../components/FormField';
import { sessionStore } from '../session/session-store';

/** `POST /api/auth/admin`: the password (ADMIN_PASSWORD on the server) buys an admin token for this tab. */
export function AdminSignIn() {
  const [password, setPassword] = useState('');
  const titleId = useId();
  const signIn = useMutation({
    mutationFn: () => api.signInAdmin(password),
    onSuccess: ({ token }) => sessionStore.setAdminToken(token),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (password && !signIn.isPending) signIn.mutate();
  };

  return (
    <section className="narrow card panel" aria-labelledby={titleId}>
      <h1 id={titleId}>Admin sign-in</h1>
      <p className="admin-muted">
        Create sales and watch them live. You stay signed in on this browser, in every tab, until you sign out or the
        session expires (24 hours by default).
      </p>
      <form className="form" onSubmit={submit}>
        <InputField
          label="Admin password"
          type="password"
          value={password}
          onChange={(event) => setPassword(event.target.value)}
          autoComplete="current-password"
          required
          // eslint-disable-next-line jsx-a11y/no-autofocus -- the page's only task; focus saves a click
          autoFocus
        />
        {signIn.isError && <ErrorNotice error={signIn.error} />}
        <button type="submit" className="button" disabled={!password || signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </section>
  );
}
