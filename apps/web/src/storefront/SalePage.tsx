import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useParams } from 'react-router';
import { isApiError } from '../api/api-error';
import { api, queryKeys } from '../api/endpoints';
import { ErrorCode } from '@flash-sale/domain';
import { SaleStatusBadge, StrategyBadge } from '../components/badges';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatDateTime } from '../components/format';
import { useServerNow } from '../components/use-now';
import { useSession } from '../session/use-session';
import { BuyPanel } from './BuyPanel';
import { effectiveStatus } from './effective-status';
import { SaleImage } from './SaleImage';

/** One sale: what it is, and the buy panel that follows the shopper's order through to payment. */
export function SalePage() {
  const { saleId = '' } = useParams();
  const { guest } = useSession();
  const now = useServerNow();
  const sale = useQuery({
    queryKey: queryKeys.sale(saleId),
    queryFn: ({ signal }) => api.getSale(saleId, signal),
    refetchInterval: 2_000, // remaining units move fast during a sale
  });

  const status = sale.data ? effectiveStatus(sale.data, now) : undefined;
  // The countdown just reached zero: ask the server, which decides when the sale opens.
  const { refetch } = sale;
  useEffect(() => {
    if (status === 'live' && sale.data?.status === 'upcoming') void refetch();
  }, [status, sale.data?.status, refetch]);

  if (sale.isPending) return <p aria-live="polite">Loading the sale…</p>;
  if (sale.isError) {
    return (
      <section className="empty-state">
        <h1>{isApiError(sale.error, ErrorCode.SaleNotFound) ? 'Sale not found' : 'Could not load the sale'}</h1>
        <ErrorNotice error={sale.error} />
        <p>
          <Link to="/">Back to all sales</Link>
        </p>
      </section>
    );
  }

  const data = sale.data;
  return (
    <div className="sale-layout">
      <article className="card sale-hero">
        <SaleImage sale={data} className="sale-hero__image" />
        <div className="sale-hero__body">
          <div className="button-row">
            <SaleStatusBadge status={status ?? data.status} />
            <StrategyBadge strategy={data.strategy} />
          </div>
          <h1>{data.name}</h1>
          {data.description && <p>{data.description}</p>}
          <dl className="facts">
            <dt>Opens</dt>
            <dd>{formatDateTime(data.startsAt)}</dd>
            <dt>Closes</dt>
            <dd>{formatDateTime(data.endsAt)}</dd>
            <dt>Limit</dt>
            <dd>{data.perUserLimit} per customer</dd>
            <dt>Pay within</dt>
            <dd>{Math.round(data.paymentTimeoutSeconds / 60)} minutes of buying</dd>
          </dl>
        </div>
      </article>
      <BuyPanel sale={data} status={status ?? data.status} guest={guest} />
    </div>
  );
}
