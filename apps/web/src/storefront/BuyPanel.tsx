import { ErrorCode, type Sale, type SaleStatus, type Session } from '@flash-sale/contract';
import { useId, useState } from 'react';
import { Link } from 'react-router';
import { isApiError } from '../api/api-error';
import { Countdown } from '../components/Countdown';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatMoney } from '../components/format';
import { SelectField } from '../components/FormField';
import { StockMeter } from '../components/StockMeter';
import { OrderTracker } from './OrderTracker';
import { useBuyFlow } from './use-buy-flow';
import { useMyOrdersInSale } from './use-held-units';
import { useWaitingRoom } from './use-waiting-room';
import { WaitingRoomPanel } from './WaitingRoomPanel';

/** At most this many units in the quantity picker, whatever the per-user limit. */
const MAX_PICKER_QUANTITY = 10;

interface BuyPanelProps {
  sale: Sale;
  status: SaleStatus;
  guest: Session | null;
}

export function BuyPanel({ sale, status, guest }: BuyPanelProps) {
  return (
    <aside className="buy-panel-column" aria-label="Buy">
      <div className="card buy-panel">
        <div className="buy-panel__head">
          <span className="buy-panel__price">{formatMoney(sale.priceCents)}</span>
          <StockMeter remaining={sale.remaining} stock={sale.stock} />
        </div>
        {guest ? (
          <BuyControls sale={sale} status={status} guest={guest} />
        ) : (
          <>
            <SaleWindowNotice sale={sale} status={status} />
            <Link className="button button--large" to={`/sign-in?next=${encodeURIComponent(`/sales/${sale.id}`)}`}>
              Sign in to buy
            </Link>
          </>
        )}
      </div>
    </aside>
  );
}

/**
 * The sale's window in one line or box. `holding`: the shopper already has units here — then a sold-out
 * sale is their success, not a refusal, and is not announced as "Sold out" above their own order.
 * `inRoom`: the shopper waits in the sale's waiting room, which counts down to the opening itself.
 */
function SaleWindowNotice({
  sale,
  status,
  holding = false,
  inRoom = false,
}: {
  sale: Sale;
  status: SaleStatus;
  holding?: boolean;
  inRoom?: boolean;
}) {
  switch (status) {
    case 'upcoming':
      if (inRoom) return null;
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
      if (holding) return <p className="field__hint">Every unit is now claimed — yours is safe below.</p>;
      return (
        <div className="notice notice--warning" role="status">
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

/**
 * What a signed-in shopper can do here: buy, then follow their order. On a sale with a waiting room the
 * buy step shows only once the room has admitted them (or while a purchase is under way); a shopper at
 * their limit has nothing to wait for, and does not join.
 */
function BuyControls({ sale, status: saleStatus, guest }: { sale: Sale; status: SaleStatus; guest: Session }) {
  const [quantity, setQuantity] = useState(1);
  const quantityId = useId();
  const { mine: mineHere, held, loaded } = useMyOrdersInSale(sale.id, guest);
  const left = Math.max(0, sale.perUserLimit - held);
  const atLimit = left === 0;
  const wantsRoom = sale.waitingRoom !== null && !atLimit && saleStatus !== 'ended';
  const room = useWaitingRoom(sale.id, guest, { enabled: wantsRoom && loaded, unitsLeft: sale.remaining > 0 });
  const inRoom = wantsRoom && room.phase !== 'gone';
  const flow = useBuyFlow(
    sale.id,
    guest,
    inRoom ? { admission: { pass: room.ticket?.pass, onRequired: () => room.rejoin(true) } } : {},
  );
  // The room hears of a sell-out or of the end at its next poll, before the sale's own figures do.
  const status = inRoom && (room.phase === 'sold_out' || room.phase === 'ended') ? room.phase : saleStatus;
  const buyStep = !inRoom || room.phase === 'admitted' || flow.busy;
  // The order to follow: the one just bought, else this shopper's latest in this sale (after a reload).
  const latestHere = mineHere[0];
  const followed = flow.state.phase === 'accepted' ? flow.state.order.orderNo : latestHere?.orderNo;
  const maxQuantity = Math.min(left, MAX_PICKER_QUANTITY);
  const chosen = Math.min(quantity, Math.max(1, maxQuantity));

  // A refusal is about the moment it was given: once the sale, the stock or the shopper's orders move
  // (paid, units returned, sold out for everyone…) it no longer describes the page and is not shown.
  const context = `${status}|${sale.remaining > 0}|${held}|${latestHere?.status ?? ''}`;
  const refusal = flow.state.phase === 'refused' ? flow.state : undefined;
  // Once the page has moved on from a refusal it stays dismissed, even if the page comes back to what
  // it showed then (the stock returned: "sold out" is no longer the news). State adjusted during
  // render, React's pattern for information from earlier renders.
  const [dismissed, setDismissed] = useState<unknown>(null);
  if (refusal && !refusal.outcomeUnknown && refusal.context !== context && dismissed !== refusal) {
    setDismissed(refusal);
  }
  const showRefusal =
    refusal &&
    refusal !== dismissed &&
    (refusal.outcomeUnknown || refusal.context === context) &&
    // The sold-out box already says it: not twice.
    !(status === 'sold_out' && isApiError(refusal.error, ErrorCode.SoldOut));

  return (
    <>
      <SaleWindowNotice sale={sale} status={status} holding={held > 0} inRoom={inRoom} />
      {inRoom && sale.waitingRoom && <WaitingRoomPanel room={room} passSeconds={sale.waitingRoom.passSeconds} />}
      {buyStep && maxQuantity > 1 && status === 'live' && (
        <SelectField
          id={quantityId}
          label="Quantity"
          value={chosen}
          onChange={(event) => setQuantity(Number(event.target.value))}
          disabled={flow.busy}
        >
          {Array.from({ length: maxQuantity }, (_, i) => i + 1).map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </SelectField>
      )}
      {/* At the limit there is nothing to press: the hint below says why, and the order follows. */}
      {buyStep && (!atLimit || flow.busy) && (
        <button
          type="button"
          className="button button--large"
          onClick={() => void flow.buy(chosen, context)}
          disabled={status !== 'live' || flow.busy || atLimit}
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
      )}
      <p id={`${quantityId}-buy-hint`} className="field__hint">
        {atLimit
          ? `You have ${held} of ${sale.perUserLimit} — the most one customer may buy here.`
          : held > 0
            ? `You have ${held}; you may buy ${left} more.`
            : `Limit ${sale.perUserLimit} per customer. You pay after your unit is reserved.`}
      </p>
      {showRefusal && (
        <div>
          <ErrorNotice error={refusal.error} />
          {refusal.outcomeUnknown && (
            <p className="field__hint">
              Pressing Buy now again is safe: it retries the same purchase and can never buy twice.
            </p>
          )}
        </div>
      )}
      {followed && <OrderTracker key={followed} orderNo={followed} guest={guest} compact />}
    </>
  );
}
