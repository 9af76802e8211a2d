import { useId } from 'react';
import { useSession } from '../session/use-session';

/**
 * The operations pages the API serves beside the console. Bull Board cannot read the console's token
 * from sessionStorage, so the link goes through `/admin/queues/login?token=…`, which sets its cookie and
 * redirects to the board; it opens in a new tab so the live dashboard keeps running.
 */
export function QueueDashboardLink({ className }: { className?: string }) {
  const { adminToken } = useSession();
  const newTabNoteId = useId();
  if (!adminToken) return null;
  return (
    <>
      <a
        className={className}
        href={`/admin/queues/login?token=${encodeURIComponent(adminToken)}`}
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
