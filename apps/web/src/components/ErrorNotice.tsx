import { errorMessage } from '../api/error-messages';

/** A refusal or failure, in words, announced to screen readers as it appears. */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  return (
    <div className="notice notice--error" role="alert">
      {title && <strong className="notice__title">{title}</strong>}
      <span>{errorMessage(error)}</span>
    </div>
  );
}

/** A query as a page shows it until it has data: a polite "loading" line, or its failure under `failed`. */
export function QueryProgress({
  query,
  loading,
  failed,
}: {
  query: { isPending: boolean; isError: boolean; error: unknown };
  loading: string;
  failed: string;
}) {
  if (query.isPending) return <p aria-live="polite">{loading}</p>;
  if (query.isError) return <ErrorNotice error={query.error} title={failed} />;
  return null;
}
