import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link, NavLink, Outlet, ScrollRestoration, useLocation } from 'react-router';
import type { Session } from '@flash-sale/contract';
import { sessionStore } from '../session/session-store';
import { useSession } from '../session/use-session';

/** The shop's frame: a skip link, the header with navigation and who is signed in, the page, a footer. */
export function Layout() {
  const { guest, adminToken } = useSession();
  const inConsole = useLocation().pathname.startsWith('/admin');
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="site-header__inner">
          <NavLink to="/" className="brand" aria-label="Flashbuy home">
            <span className="brand__mark" aria-hidden="true">
              ⚡
            </span>
            <span className="brand__name">Flashbuy</span>
          </NavLink>
          <nav aria-label="Main" className="site-nav">
            <NavLink to="/" end>
              Sales
            </NavLink>
            <NavLink to="/orders">My orders</NavLink>
            {/* The console is for the shop's staff: its link shows once an admin signed in (at /admin). */}
            {adminToken && <NavLink to="/admin">Admin</NavLink>}
          </nav>
          {/* The console has its own admin sign-in and sign-out: the shopper's would only confuse there. */}
          {!inConsole && (
            <div className="site-header__user">{guest ? <SignedInShopper guest={guest} /> : <SignInLink />}</div>
          )}
        </div>
      </header>
      <main id="main" className="page" tabIndex={-1}>
        <Outlet />
      </main>
      <footer className="site-footer">
        <p>
          Flashbuy is a reference flash-sale shop: every purchase is reserved atomically in Redis and written once to
          MySQL — it never oversells. <a href="/docs">API docs</a>
        </p>
      </footer>
      <ScrollRestoration />
    </>
  );
}

function SignInLink() {
  return (
    <NavLink to="/sign-in" className="button button--small">
      Sign in
    </NavLink>
  );
}

/**
 * Who is signed in, and signing out. A guest's account exists only in this browser: signing out loses
 * its orders for good, so the guest is told so and offered to register (which keeps them) first.
 */
function SignedInShopper({ guest }: { guest: Session }) {
  const [confirming, setConfirming] = useState(false);
  const queryClient = useQueryClient();
  const warningId = useId();
  const registered = guest.user.registered === true;
  // Registering comes back to the page the shopper was on.
  const { pathname, search } = useLocation();
  const registerHere = `/sign-in?mode=register&next=${encodeURIComponent(pathname + search)}`;
  const signOut = () => {
    setConfirming(false);
    sessionStore.setGuest(null);
    queryClient.removeQueries({ queryKey: ['orders'] });
    queryClient.removeQueries({ queryKey: ['order'] });
  };
  return (
    <>
      <span className="site-header__name" title={`Signed in as ${guest.user.name}`}>
        <span className="visually-hidden">Signed in as </span>
        <span>{guest.user.name}</span>
      </span>
      {!registered && <span className="badge badge--guest">guest</span>}
      <button
        type="button"
        className="button button--ghost button--small"
        onClick={() => (registered ? signOut() : setConfirming(true))}
        aria-expanded={registered ? undefined : confirming}
        aria-controls={registered ? undefined : warningId}
      >
        Sign out
      </button>
      {confirming && (
        <div id={warningId} className="card sign-out-warning" role="alertdialog" aria-labelledby={`${warningId}-title`}>
          <strong id={`${warningId}-title`}>Sign out of a guest account?</strong>
          <p>
            Guest orders belong to this browser only. After signing out you cannot get back to them — create an account
            first (it keeps your orders) and sign in again anywhere.
          </p>
          <div className="button-row">
            <Link className="button button--small" to={registerHere} onClick={() => setConfirming(false)}>
              Create an account
            </Link>
            <button type="button" className="button button--secondary button--small" onClick={signOut}>
              Sign out anyway
            </button>
            <button type="button" className="button button--ghost button--small" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
    </>
  );
}
