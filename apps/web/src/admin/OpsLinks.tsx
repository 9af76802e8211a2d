import { useEffect, useId } from 'react';
import { useSession } from '../session/use-session';

const QUEUE_BOARD = '/admin/queues';

/**
 * Gives the board its cookie: `POST /admin/queues/login` with the token in the Authorization header.
 * (It once went in the link's URL, which lands in history, logs and Referer headers.)
 */
function logInToQueueBoard(adminToken: string): void {
  void fetch(`${QUEUE_BOARD}/login`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` } }).catch(
    () => undefined, // the board then answers 401 itself, with the reason
  );
}

/**
 * The operations pages the API serves beside the console. Bull Board cannot read the console's token
 * from sessionStorage, so the console first has the API set the board's HttpOnly cookie (above); the
 * link itself is plain and opens in a new tab so the live dashboard keeps running.
 */
export function QueueDashboardLink({ className }: { className?: string }) {
  const { adminToken } = useSession();
  const newTabNoteId = useId();
  useEffect(() => {
    if (adminToken) logInToQueueBoard(adminToken);
  }, [adminToken]);
  if (!adminToken) return null;
  return (
    <>
      <a
        className={className}
        href={QUEUE_BOARD}
        target="_blank"
        rel="noopener noreferrer"
        aria-describedby={newTabNoteId}
      >
        Queue dashboard
        <span className="external-mark" aria-hidden="true">
          ↗
        </span>
      </a>
      {/* A description, not part of the name: the link is still called "Queue dashboard". */}
      <span id={newTabNoteId} hidden>
        Opens in a new tab
      </span>
    </>
  );
}

export function ApiDocsLink({ className }: { className?: string }) {
  return (
    <a className={className} href="/docs">
      API docs
    </a>
  );
}
