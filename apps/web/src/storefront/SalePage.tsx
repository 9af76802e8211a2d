export function SalePage() {
  return <h1>SalePage</h1>;
}
