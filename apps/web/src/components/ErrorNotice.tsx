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
