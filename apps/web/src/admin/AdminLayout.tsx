import { Outlet } from 'react-router';
/** Placeholder: the admin console is built in this folder. */
export function AdminLayout() {
  return <Outlet />;
}
