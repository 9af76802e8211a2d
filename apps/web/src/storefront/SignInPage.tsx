import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { api } from '../api/endpoints';
import { ErrorNotice } from '../components/ErrorNotice';
import { sessionStore } from '../session/session-store';

const NAME_MAX = 64; // API.md: guest name ≤ 64

/** Only same-site paths: `next` comes from the URL, and must not send a shopper to another site. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

/** Guests sign in with just a name (API.md `POST /api/auth/guest`): enough to own orders. */
export function SignInPage() {
  const [name, setName] = useState('');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const nameId = useId();
  const signIn = useMutation({
    mutationFn: () => api.signInGuest(name.trim()),
    onSuccess: (session) => {
      sessionStore.setGuest(session);
      void navigate(safeNext(params.get('next')), { replace: true });
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() && !signIn.isPending) signIn.mutate();
  };

  return (
    <section className="narrow card panel">
      <h1>Sign in</h1>
      <p>Tell us what to call you. Your orders stay with this browser.</p>
      <form className="form" onSubmit={submit}>
        <div className="field">
          <label htmlFor={nameId}>Your name</label>
          <input
            id={nameId}
            className="input"
            value={name}
            onChange={(event) => setName(event.target.value)}
            maxLength={NAME_MAX}
            autoComplete="nickname"
            required
            // eslint-disable-next-line jsx-a11y/no-autofocus -- the page's only task; focus saves a click
            autoFocus
          />
        </div>
        {signIn.isError && <ErrorNotice error={signIn.error} />}
        <button type="submit" className="button" disabled={!name.trim() || signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Continue'}
        </button>
      </form>
    </section>
  );
}
