/** Placeholder: the admin console is built in this folder. */
export function SaleDashboardPage() {
  return <h1>SaleDashboardPage</h1>;
}
