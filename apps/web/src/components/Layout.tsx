import { NavLink, Outlet, ScrollRestoration } from 'react-router';
import { sessionStore } from '../session/session-store';
import { useSession } from '../session/use-session';

/** The shop's frame: a skip link, the header with navigation and who is signed in, the page, a footer. */
export function Layout() {
  const { guest } = useSession();
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
            Flashbuy
          </NavLink>
          <nav aria-label="Main" className="site-nav">
            <NavLink to="/" end>
              Sales
            </NavLink>
            <NavLink to="/orders">My orders</NavLink>
            <NavLink to="/admin">Admin</NavLink>
          </nav>
          <div className="site-header__user">
            {guest ? (
              <>
                <span className="site-header__name" title={`Signed in as ${guest.user.name}`}>
                  {guest.user.name}
                </span>
                <button
                  type="button"
                  className="button button--ghost button--small"
                  onClick={() => sessionStore.setGuest(null)}
                >
                  Sign out
                </button>
              </>
            ) : (
              <NavLink to="/sign-in" className="button button--small">
                Sign in
              </NavLink>
            )}
          </div>
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
