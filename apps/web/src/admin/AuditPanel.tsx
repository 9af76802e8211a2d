import { useId } from 'react';
import type { Audit } from '@flash-sale/contract';
import { clockTimeElement } from './clock-time';

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/**
 * The audit's verdict (docs/api.md `Audit`), recomputed from MySQL and Redis with every sample: green when
 * the books balance, red with the counts when they do not — and for good once the sale was ever oversold.
 */
export function AuditPanel({ audit }: { audit: Audit }) {
  const headingId = useId();
  // The peak outlives the orders that made it: expired or cancelled, they gave their units back.
  const givenBack = audit.oversoldPeak > audit.oversold;
  const counts = [
    givenBack
      ? `${plural(audit.oversoldPeak, 'unit', 'units')} oversold at the peak (${audit.oversold.toLocaleString('en-US')} now: expiries and cancels gave the rest back)`
      : plural(audit.oversold, 'unit oversold', 'units oversold'),
    plural(audit.duplicateOrders, 'duplicate order', 'duplicate orders'),
    plural(audit.lostReservations, 'lost reservation', 'lost reservations'),
  ];
  const countersClean = audit.oversoldPeak === 0 && audit.duplicateOrders === 0 && audit.lostReservations === 0;
  return (
    <section className="card panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Audit</h2>
      <div className={`audit-verdict ${audit.ok ? 'audit-verdict--ok' : 'audit-verdict--failed'}`}>
        {/* Only the headline is live: the counts can move every second while a sale goes wrong. */}
        <p className="audit-verdict__title" aria-live="polite">
          <span aria-hidden="true">{audit.ok ? '✓ ' : '✗ '}</span>
          {audit.ok ? 'Books balance — no oversell' : audit.oversoldPeak > 0 ? 'Oversold' : 'Books do not balance'}
        </p>
        {audit.ok ? (
          <p className="audit-verdict__detail">{counts.join(' · ')}</p>
        ) : (
          <ul className="audit-verdict__counts">
            {counts.map((text) => (
              <li key={text}>{text}</li>
            ))}
          </ul>
        )}
        {!audit.ok && countersClean && (
          <p className="audit-verdict__detail">
            Redis and MySQL disagree on the stock
            {audit.drift ? ` by ${plural(Math.abs(audit.drift), 'unit', 'units')}` : ''}. Mid-burst this is usually a
            reservation a moment ahead of its order row: check again once the queue has drained.
          </p>
        )}
      </div>
      <p className="admin-muted admin-small">
        Stock {audit.stock.toLocaleString('en-US')} · remaining {audit.remaining.toLocaleString('en-US')} · held{' '}
        {audit.held.toLocaleString('en-US')}
        {audit.checkedAt && <> · checked at {clockTimeElement(audit.checkedAt)}</>}
      </p>
      {audit.leases && audit.leases.granted > 0 && (
        <p className="admin-muted admin-small">
          Leased to Redis {audit.leases.granted.toLocaleString('en-US')} · converted to orders{' '}
          {audit.leases.converted.toLocaleString('en-US')} · in doubt {audit.leases.inDoubt.toLocaleString('en-US')} ·
          returned {audit.leases.returned.toLocaleString('en-US')} · Redis incarnation {audit.leases.epoch}
          {audit.leases.inDoubt > 0 && ' — Redis lost its state; reconciliation returns these units once settled'}
        </p>
      )}
    </section>
  );
}
