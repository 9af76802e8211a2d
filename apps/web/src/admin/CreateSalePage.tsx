/** Placeholder: the admin console is built in this folder. */
export function CreateSalePage() {
  return <h1>CreateSalePage</h1>;
}
