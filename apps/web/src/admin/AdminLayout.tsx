import { useQueryClient } from '@tanstack/react-query';
import { NavLink, Outlet } from 'react-router';
import { sessionStore } from '../session/session-store';
import { useSession } from '../session/use-session';
import { AdminSignIn } from './AdminSignIn';
import { ApiDocsLink, QueueDashboardLink } from './OpsLinks';
import './admin.css';

/**
 * The admin console's frame: the sign-in until this tab holds an admin token, then the console's own
 * navigation above the page. The token leaves on Sign out or when the API answers 401 (admin-request.ts).
 */
export function AdminLayout() {
  const { adminToken } = useSession();
  const queryClient = useQueryClient();
  if (!adminToken) return <AdminSignIn />;

  const signOut = () => {
    sessionStore.setAdminToken(null);
    // Admin-only data (every such key starts with 'admin', see queryKeys) leaves with the admin.
    queryClient.removeQueries({ queryKey: ['admin'] });
  };

  return (
    <div className="admin">
      <div className="admin-bar card">
        <span className="admin-bar__title">Admin console</span>
        <nav aria-label="Admin" className="admin-nav">
          <NavLink to="/admin" end>
            Sales
          </NavLink>
          <NavLink to="/admin/sales/new">New sale</NavLink>
          <NavLink to="/admin/demo">Oversell demo</NavLink>
          <QueueDashboardLink />
          <ApiDocsLink />
        </nav>
        <button type="button" className="button button--secondary button--small" onClick={signOut}>
          Sign out
        </button>
      </div>
      <Outlet />
    </div>
  );
}
