import { Link } from 'react-router';

export function NotFoundPage() {
  return (
    <section className="empty-state">
      <h1>Page not found</h1>
      <p>There is nothing at this address.</p>
      <Link to="/" className="button">
        Back to the sales
      </Link>
    </section>
  );
}
