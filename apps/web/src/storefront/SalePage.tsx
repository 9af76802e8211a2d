import { ErrorCode, UNSAFE_STRATEGIES } from '@flash-sale/contract';
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError, isApiError } from '../api/api-error';
import { api, queryKeys } from '../api/endpoints';
import { SaleStatusBadge, StrategyBadge } from '../components/badges';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatDateTime, formatSpan } from '../components/format';
import { OfflineNotice } from '../components/OfflineNotice';
import { useServerNow } from '../components/use-now';
import { useSession } from '../session/use-session';
import { BuyPanel } from './BuyPanel';
import { effectiveStatus } from './effective-status';
import { SaleImage } from './SaleImage';
import { useMyOrdersInSale } from './use-held-units';

/** No answer at all (offline, server down) rather than a refusal: worth retrying, and said so. */
function unreachable(error: unknown): boolean {
  return !(error instanceof ApiError) || error.status === 0 || error.status >= 500;
}

/**
 * One sale: its name, the buy panel that follows the shopper's order through to payment, then the
 * details. The panel comes right after the title so that on a phone Buy (and then Pay) is on the
 * first screen; on a wide screen it sits beside them.
 */
export function SalePage() {
  const { saleId = '' } = useParams();
  const { guest } = useSession();
  const now = useServerNow();
  const sale = useQuery({
    queryKey: queryKeys.sale(saleId),
    queryFn: ({ signal }) => api.getSale(saleId, signal),
    refetchInterval: 2_000, // remaining units move fast during a sale
    // Keep asking while offline (the default pauses the query, and the page would say "Loading" forever).
    networkMode: 'always',
  });

  const status = sale.data ? effectiveStatus(sale.data, now) : undefined;
  // A shopper who holds units of a sold-out sale got what they came for: not "Sold out" above their order.
  const { held } = useMyOrdersInSale(saleId, guest);
  // The countdown just reached zero: ask the server, which decides when the sale opens.
  const { refetch } = sale;
  useEffect(() => {
    if (status === 'live' && sale.data?.status === 'upcoming') void refetch();
  }, [status, sale.data?.status, refetch]);

  const retry = () => void refetch();
  if (sale.isPending) {
    if (sale.failureCount > 0) return <OfflineNotice what="The sale" onRetry={retry} retrying={sale.isFetching} />;
    return <p aria-live="polite">Loading the sale…</p>;
  }
  if (sale.isError) {
    if (unreachable(sale.error)) return <OfflineNotice what="The sale" onRetry={retry} retrying={sale.isFetching} />;
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
      <header className="sale-title">
        <div className="button-row">
          {held > 0 && (status ?? data.status) === 'sold_out' ? (
            <span className="badge badge--ok">You got one</span>
          ) : (
            <SaleStatusBadge status={status ?? data.status} />
          )}
          {/* How a sale sells is the shop's business, except for the one that can oversell: that one is labelled. */}
          {UNSAFE_STRATEGIES.includes(data.strategy) && <StrategyBadge strategy={data.strategy} />}
        </div>
        <h1>{data.name}</h1>
        {sale.failureCount > 0 && sale.isFetching && (
          <p className="field__hint" role="status">
            Reconnecting… the stock shown may be a few seconds old.
          </p>
        )}
      </header>
      <BuyPanel sale={data} status={status ?? data.status} guest={guest} />
      <article className="card sale-hero" aria-label="About this sale">
        <SaleImage sale={data} className="sale-hero__image" />
        <div className="sale-hero__body">
          {data.description && <p>{data.description}</p>}
          <dl className="facts">
            <dt>Opens</dt>
            <dd>{formatDateTime(data.startsAt)}</dd>
            <dt>Closes</dt>
            <dd>{formatDateTime(data.endsAt)}</dd>
            <dt>Limit</dt>
            <dd>{data.perUserLimit} per customer</dd>
            <dt>Pay within</dt>
            <dd>{formatSpan(data.paymentTimeoutSeconds)} of buying</dd>
          </dl>
        </div>
      </article>
    </div>
  );
}
