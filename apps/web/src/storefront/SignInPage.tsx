import { ErrorCode, type Session } from '@flash-sale/contract';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { isApiError } from '../api/api-error';
import { api } from '../api/endpoints';
import { ErrorNotice } from '../components/ErrorNotice';
import { InputField } from '../components/FormField';
import { sessionStore } from '../session/session-store';
import { useSession } from '../session/use-session';

const NAME_MAX = 64; // docs/api.md: name ≤ 64
const PASSWORD_MIN = 8; // docs/api.md: password 8..128
const PASSWORD_MAX = 128;

type Mode = 'sign-in' | 'register' | 'guest';

/** Only same-site paths: `next` comes from the URL, and must not send a shopper to another site. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

const TITLES: Record<Mode, string> = {
  'sign-in': 'Sign in',
  register: 'Create an account',
  guest: 'Continue as a guest',
};

/**
 * Three ways in (docs/api.md "Auth"): an account (name + password; signs in again on any browser and finds
 * its orders), a new account, or a guest with just a name (its orders stay with this browser). A
 * signed-in guest who registers keeps its orders: the guest's token goes with the registration.
 */
export function SignInPage() {
  const [params, setParams] = useSearchParams();
  const { guest } = useSession();
  const requested = params.get('mode');
  const mode: Mode = requested === 'register' || requested === 'guest' ? requested : 'sign-in';
  const keepingGuest = mode === 'register' && guest && !guest.user.registered ? guest : null;
  const [name, setName] = useState(keepingGuest?.user.name ?? '');
  const [password, setPassword] = useState('');
  const navigate = useNavigate();
  const submitIt = useMutation({
    mutationFn: (): Promise<Session> => {
      if (mode === 'guest') return api.signInGuest(name.trim());
      if (mode === 'register') return api.register(name.trim(), password, keepingGuest?.token);
      return api.signIn(name.trim(), password);
    },
    onSuccess: (session) => {
      sessionStore.setGuest(session);
      void navigate(safeNext(params.get('next')), { replace: true });
    },
  });
  const switchTo = (next: Mode) => {
    submitIt.reset();
    const nextParams = new URLSearchParams(params);
    nextParams.set('mode', next);
    setParams(nextParams, { replace: true });
  };

  const needsPassword = mode !== 'guest';
  const ready = name.trim() !== '' && (!needsPassword || password.length >= (mode === 'register' ? PASSWORD_MIN : 1));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (ready && !submitIt.isPending) submitIt.mutate();
  };

  return (
    <section className="narrow card panel">
      <h1>{TITLES[mode]}</h1>
      <p>
        {mode === 'sign-in' && 'Sign in with your name and password to see your orders on any device.'}
        {mode === 'register' &&
          (keepingGuest
            ? 'Choose a password: your guest orders move into the account, and you can sign in again anywhere.'
            : 'A name and a password: sign in again on any device and find your orders.')}
        {mode === 'guest' && 'Just a name. Your orders stay with this browser — signing out loses them.'}
      </p>
      <form className="form" onSubmit={submit}>
        <InputField
          label="Your name"
          value={name}
          onChange={(event) => setName(event.target.value)}
          maxLength={NAME_MAX}
          autoComplete={mode === 'guest' ? 'nickname' : 'username'}
          required
          // eslint-disable-next-line jsx-a11y/no-autofocus -- the page's only task; focus saves a click
          autoFocus
        />
        {needsPassword && (
          <InputField
            label="Password"
            hint={mode === 'register' ? `At least ${PASSWORD_MIN} characters.` : undefined}
            type="password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            minLength={mode === 'register' ? PASSWORD_MIN : undefined}
            maxLength={PASSWORD_MAX}
            autoComplete={mode === 'register' ? 'new-password' : 'current-password'}
            required
          />
        )}
        {submitIt.isError &&
          (isApiError(submitIt.error, ErrorCode.InvalidCredentials) ? (
            <div className="notice notice--error" role="alert">
              That name and password do not match.
            </div>
          ) : (
            <ErrorNotice error={submitIt.error} />
          ))}
        <button type="submit" className="button" disabled={!ready || submitIt.isPending}>
          {submitIt.isPending
            ? 'One moment…'
            : mode === 'register'
              ? 'Create account'
              : mode === 'guest'
                ? 'Continue'
                : 'Sign in'}
        </button>
      </form>
      <p className="sign-in-switch">
        {mode !== 'sign-in' && (
          <button type="button" className="link-button" onClick={() => switchTo('sign-in')}>
            I have an account
          </button>
        )}
        {mode !== 'register' && (
          <button type="button" className="link-button" onClick={() => switchTo('register')}>
            Create an account
          </button>
        )}
        {mode !== 'guest' && !guest && (
          <button type="button" className="link-button" onClick={() => switchTo('guest')}>
            Continue as a guest
          </button>
        )}
        <Link to="/">Back to the sales</Link>
      </p>
    </section>
  );
}
