/** Placeholder: the admin console is built in this folder. */
export function AdminSalesPage() {
  return <h1>AdminSalesPage</h1>;
}
