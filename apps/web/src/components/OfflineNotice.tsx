/**
 * The shop cannot be reached (offline, or the server is down): say so, say that it keeps trying, and
 * offer to try now — instead of a "Loading…" that never ends. The button stays usable while a retry
 * waits out its back-off: pressing it asks again at once.
 */
export function OfflineNotice({ what, onRetry, retrying }: { what: string; onRetry: () => void; retrying: boolean }) {
  return (
    <div className="notice notice--warning offline-notice" role="alert">
      <strong className="notice__title">Cannot reach the shop</strong>
      <span>
        {what} could not be loaded — you may be offline, or the shop is restarting. We keep trying; nothing you did is
        lost.
      </span>
      <span className="button-row">
        <button type="button" className="button button--secondary button--small" onClick={onRetry}>
          Try again now
        </button>
        {retrying && <span aria-hidden="true">Trying…</span>}
      </span>
    </div>
  );
}
