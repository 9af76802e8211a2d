export function SalesPage() {
  return <h1>SalesPage</h1>;
}
