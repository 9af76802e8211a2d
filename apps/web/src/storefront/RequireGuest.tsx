import type { ReactNode } from 'react';
import { Link, useLocation } from 'react-router';
import type { Session } from '@flash-sale/contract';
import { useSession } from '../session/use-session';

/** Pages about "my" things need a signed-in guest; others get a way to sign in and come back. */
export function RequireGuest({ children }: { children: (guest: Session) => ReactNode }) {
  const { guest } = useSession();
  const location = useLocation();
  if (guest) return <>{children(guest)}</>;
  return (
    <section className="empty-state card">
      <h1>Sign in to see your orders</h1>
      <p>Sign in with your account to find your orders on any device.</p>
      <Link className="button" to={`/sign-in?next=${encodeURIComponent(location.pathname)}`}>
        Sign in
      </Link>
    </section>
  );
}
