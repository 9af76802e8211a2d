import { ErrorCode, type SaleDashboard, sellsFromRedis } from '@flash-sale/contract';
import { useId } from 'react';
import { Link, useParams } from 'react-router';
import { isApiError } from '../api/api-error';
import { SaleStatusBadge, StrategyBadge } from '../components/badges';
import { Countdown } from '../components/Countdown';
import { ErrorNotice } from '../components/ErrorNotice';
import { AuditPanel } from './AuditPanel';
import { clockTimeElement } from './clock-time';
import { LiveSeriesCharts } from './LiveSeriesCharts';
import { ApiDocsLink, QueueDashboardLink } from './OpsLinks';
import { OrdersByStatusTable } from './OrdersByStatusTable';
import { PreloadNotice } from './PreloadNotice';
import { PurchasesPerSecondChart } from './PurchasesPerSecondChart';
import { SaleFunnelChart } from './SaleFunnelChart';
import { Stat } from './Stat';
import { purchasesPerSecond } from './purchases-per-second';
import { canPreload, usePreloadSale } from './use-preload-sale';
import { useSaleDashboard } from './use-sale-dashboard';
import { WaitingRoomLivePanel } from './WaitingRoomLivePanel';

/**
 * One sale, live: stock, purchases, the order queue, its waiting room (if it has one), purchases per
 * second, the funnel from the room to payment, latency, backlog and drift, and the audit's verdict.
 */
export function SaleDashboardPage() {
  const { saleId = '' } = useParams();
  const dashboard = useSaleDashboard(saleId);
  const preload = usePreloadSale();
  const chartHeadingId = useId();
  const funnelHeadingId = useId();
  const liveHeadingId = useId();

  if (isApiError(dashboard.error, ErrorCode.SaleNotFound)) {
    return (
      <section className="empty-state">
        <h1>Sale not found</h1>
        <p>
          There is no sale with the id <code>{saleId}</code>. Check the link, or pick the sale from the list.
        </p>
        <Link to="/admin" className="button">
          Back to all sales
        </Link>
      </section>
    );
  }
  if (dashboard.isPending) return <p aria-live="polite">Loading the dashboard…</p>;
  if (dashboard.isError && !dashboard.data) {
    return <ErrorNotice error={dashboard.error} title="Could not load the dashboard" />;
  }

  const latest = dashboard.data;
  const { sale, audit } = latest;
  const ended = sale.status === 'ended';
  return (
    <>
      <div className="page-header">
        <div className="dashboard-title">
          <p className="admin-small">
            <Link to="/admin">← All sales</Link>
          </p>
          <h1>{sale.name}</h1>
          <div className="button-row dashboard-title__badges">
            <SaleStatusBadge status={sale.status} />
            <StrategyBadge strategy={sale.strategy} />
            {sale.buckets > 1 && (
              <span className="badge" title="The stock is spread over this many Redis buckets (cluster hash slots)">
                {sale.buckets} buckets
              </span>
            )}
            {sale.waitingRoom && <span className="badge badge--room">Waiting room</span>}
          </div>
          {sale.status === 'upcoming' && (
            <p className="dashboard-countdown">
              <Countdown to={sale.startsAt} label="Opens in" done="Opening…" />
            </p>
          )}
          {(sale.status === 'live' || sale.status === 'sold_out') && (
            <p className="admin-small">
              <Countdown to={sale.endsAt} label="Ends in" />
            </p>
          )}
          <p className="admin-muted admin-small">
            {ended ? (
              <>Sale ended · figures as of {clockTimeElement(latest.sampledAt)}, still updated as orders expire</>
            ) : (
              <>
                <span className="live-dot" aria-hidden="true" /> Live, every second · last sample{' '}
                {clockTimeElement(latest.sampledAt)}
              </>
            )}
          </p>
        </div>
        <div className="button-row">
          <Link to={`/admin/sales/${encodeURIComponent(sale.id)}/orders`} className="button">
            Orders
          </Link>
          {canPreload(sale) && (
            <button
              type="button"
              className="button button--secondary"
              onClick={() => preload.mutate(sale)}
              disabled={preload.isPending}
              title="Reload this sale’s stock into Redis from MySQL (after a Redis restart)"
            >
              {preload.isPending ? 'Preloading…' : 'Preload'}
            </button>
          )}
          <Link to={`/admin/sales/${encodeURIComponent(sale.id)}/edit`} className="button button--secondary">
            Edit
          </Link>
          <Link to={`/sales/${encodeURIComponent(sale.id)}`} className="button button--secondary">
            View in storefront
          </Link>
          <QueueDashboardLink className="button button--secondary" />
          <ApiDocsLink className="button button--secondary" />
        </div>
      </div>

      <PreloadNotice preload={preload} />
      {dashboard.isError && (
        <ErrorNotice error={dashboard.error} title="Live updates are failing: showing the last sample, retrying." />
      )}

      <DashboardStats dashboard={latest} />
      {sale.waitingRoom && <WaitingRoomLivePanel key={sale.id} sale={sale} room={sale.waitingRoom} />}

      <div className="dashboard-grid">
        <div className="dashboard-grid__main">
          <section className="card panel" aria-labelledby={chartHeadingId}>
            <h2 id={chartHeadingId}>Purchases per second</h2>
            <PurchasesPerSecondChart seconds={purchasesPerSecond(latest)} />
          </section>
          {latest.funnel && (
            <section className="card panel" aria-labelledby={funnelHeadingId}>
              <h2 id={funnelHeadingId}>Funnel</h2>
              <SaleFunnelChart funnel={latest.funnel} />
            </section>
          )}
        </div>
        <div className="dashboard-grid__side">
          <AuditPanel audit={audit} />
          <OrdersByStatusTable ordersByStatus={audit.ordersByStatus} />
        </div>
      </div>

      <section className="card panel" aria-labelledby={liveHeadingId}>
        <h2 id={liveHeadingId}>Latency, backlog and drift</h2>
        {sellsFromRedis(sale.strategy) ? (
          <>
            <p className="admin-muted admin-small">One point per sample since this page opened, two minutes at most.</p>
            <LiveSeriesCharts key={sale.id} sample={latest} />
          </>
        ) : (
          <p className="admin-muted">
            {sale.strategy} sells from MySQL: no hand-off to back up, no Redis copy to drift, no reservation script to
            time.
          </p>
        )}
      </section>
    </>
  );
}

function DashboardStats({ dashboard }: { dashboard: SaleDashboard }) {
  const { sale, audit, handoff, purchases } = dashboard;
  const n = (value: number) => value.toLocaleString('en-US');
  return (
    <dl className="stat-grid admin-stats">
      <Stat label="Remaining" value={n(sale.remaining)} detail={`of ${n(sale.stock)}`} />
      <Stat label="Purchases" value={n(purchases)} detail="orders, any status" />
      <Stat label="Held" value={n(audit.held)} detail="units pending payment or paid" />
      <Stat label="Unwritten" value={n(handoff.unwritten)} detail="reservations waiting in the hand-off" />
      <Stat label="Being written" value={n(handoff.beingWritten)} detail="claimed by a worker, not committed yet" />
      <Stat
        label="Writer jobs failed"
        value={n(handoff.failedJobs)}
        detail="gave up; the sweep retries"
        alert={handoff.failedJobs > 0}
      />
    </dl>
  );
}
