import type { SaleStatus } from '@flash-sale/domain';
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import type { GuestSession, Sale } from '../api/types';
import { Countdown } from '../components/Countdown';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatMoney } from '../components/format';
import { StockMeter } from '../components/StockMeter';
import { OrderTracker } from './OrderTracker';
import { useBuyFlow } from './use-buy-flow';

/** At most this many units in the quantity picker, whatever the per-user limit. */
const MAX_PICKER_QUANTITY = 10;

interface BuyPanelProps {
  sale: Sale;
  status: SaleStatus;
  guest: GuestSession | null;
}

export function BuyPanel({ sale, status, guest }: BuyPanelProps) {
  return (
    <aside className="buy-panel-column" aria-label="Buy">
      <div className="card buy-panel">
        <span className="buy-panel__price">{formatMoney(sale.priceCents)}</span>
        <StockMeter remaining={sale.remaining} stock={sale.stock} />
        <SaleWindowNotice sale={sale} status={status} />
        {guest ? (
          <BuyControls sale={sale} status={status} guest={guest} />
        ) : (
          <Link className="button button--large" to={`/sign-in?next=${encodeURIComponent(`/sales/${sale.id}`)}`}>
            Sign in to buy
          </Link>
        )}
      </div>
    </aside>
  );
}

function SaleWindowNotice({ sale, status }: { sale: Sale; status: SaleStatus }) {
  switch (status) {
    case 'upcoming':
      return (
        <div className="notice notice--info">
          <Countdown to={sale.startsAt} label="Starts in" done="Opening…" />
          <span>The Buy button opens when the countdown ends — no need to reload.</span>
        </div>
      );
    case 'live':
      return (
        <p className="field__hint">
          <Countdown to={sale.endsAt} label="Ends in" />
        </p>
      );
    case 'sold_out':
      return (
        <div className="notice notice--warning">
          <strong className="notice__title">Sold out</strong>
          <span>Every unit is claimed. Units from unpaid or cancelled orders come back — check again soon.</span>
        </div>
      );
    case 'ended':
      return (
        <div className="notice notice--info">
          <strong className="notice__title">This sale has ended</strong>
        </div>
      );
  }
}

function BuyControls({ sale, status, guest }: { sale: Sale; status: SaleStatus; guest: GuestSession }) {
  const [quantity, setQuantity] = useState(1);
  const quantityId = useId();
  const flow = useBuyFlow(sale.id, guest);
  const myOrders = useQuery({
    queryKey: queryKeys.orders(guest.user.id),
    queryFn: ({ signal }) => api.listOrders(guest.token, signal),
  });
  // The order to follow: the one just bought, else this shopper's latest in this sale (after a reload).
  const latestHere = myOrders.data?.find((order) => order.saleId === sale.id);
  const followed = flow.state.phase === 'accepted' ? flow.state.order.orderNo : latestHere?.orderNo;
  const maxQuantity = Math.min(sale.perUserLimit, MAX_PICKER_QUANTITY);

  return (
    <>
      {maxQuantity > 1 && (
        <div className="field">
          <label htmlFor={quantityId}>Quantity</label>
          <select
            id={quantityId}
            className="select"
            value={quantity}
            onChange={(event) => setQuantity(Number(event.target.value))}
            disabled={flow.busy}
          >
            {Array.from({ length: maxQuantity }, (_, i) => i + 1).map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </div>
      )}
      <button
        type="button"
        className="button button--large"
        onClick={() => void flow.buy(quantity)}
        disabled={status !== 'live' || flow.busy}
        aria-busy={flow.busy}
        aria-describedby={`${quantityId}-buy-hint`}
      >
        {flow.busy && <span className="spinner" aria-hidden="true" />}
        {flow.state.phase === 'resuming'
          ? 'Finishing your purchase…'
          : flow.state.phase === 'waiting'
            ? `Busy — trying again in ${flow.state.seconds} s…`
            : flow.busy
              ? 'Reserving…'
              : 'Buy now'}
      </button>
      <p id={`${quantityId}-buy-hint`} className="field__hint">
        Limit {sale.perUserLimit} per customer. You pay after your unit is reserved.
      </p>
      {flow.state.phase === 'refused' && (
        <div>
          <ErrorNotice error={flow.state.error} />
          {flow.state.outcomeUnknown && (
            <p className="field__hint">
              Pressing Buy now again is safe: it retries the same purchase and can never buy twice.
            </p>
          )}
        </div>
      )}
      {followed && <OrderTracker key={followed} orderNo={followed} guest={guest} />}
    </>
  );
}
