/**
 * The shop cannot be reached (offline, or the server is down): say so, say that it keeps trying, and
 * offer to try now — instead of a "Loading…" that never ends.
 */
export function OfflineNotice({ what, onRetry, retrying }: { what: string; onRetry: () => void; retrying: boolean }) {
  return (
    <div className="notice notice--warning offline-notice" role="alert">
      <strong className="notice__title">Cannot reach the shop</strong>
      <span>
        {what} could not be loaded — you may be offline, or the shop is restarting. We keep trying; nothing you did is
        lost.
      </span>
      <button type="button" className="button button--secondary button--small" onClick={onRetry} disabled={retrying}>
        {retrying ? 'Trying…' : 'Try again now'}
      </button>
    </div>
  );
}
