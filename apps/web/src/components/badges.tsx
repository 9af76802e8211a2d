import { type OrderStatus, type SaleStatus, type SaleStrategy, UNSAFE_STRATEGIES } from '@flash-sale/contract';

const SALE_STATUS_LABEL: Record<SaleStatus, string> = {
  upcoming: 'Coming soon',
  live: 'Live now',
  sold_out: 'Sold out',
  ended: 'Ended',
};

export function SaleStatusBadge({ status }: { status: SaleStatus }) {
  return <span className={`badge badge--sale-${status}`}>{SALE_STATUS_LABEL[status]}</span>;
}

const ORDER_STATUS_LABEL: Record<OrderStatus, string> = {
  QUEUED: 'Reserved — confirming',
  PENDING_PAYMENT: 'Awaiting payment',
  PAID: 'Paid',
  CANCELLED: 'Cancelled',
  EXPIRED: 'Expired',
  FAILED: 'Failed',
};

export function orderStatusLabel(status: OrderStatus): string {
  return ORDER_STATUS_LABEL[status];
}

export function OrderStatusBadge({ status }: { status: OrderStatus }) {
  return <span className={`badge badge--order-${status.toLowerCase()}`}>{ORDER_STATUS_LABEL[status]}</span>;
}

/**
 * The unsafe strategies are teaching strategies that oversell: they are labelled so wherever they show.
 * The name and the warning are each kept whole; a narrow table column may put the warning on a line of its own.
 */
export function StrategyBadge({ strategy }: { strategy: SaleStrategy }) {
  const unsafe = UNSAFE_STRATEGIES.includes(strategy);
  return (
    <span
      className={`badge ${unsafe ? 'badge--unsafe' : 'badge--strategy'}`}
      title={unsafe ? 'Can oversell: demonstration only' : undefined}
    >
      {unsafe ? (
        <>
          <span className="badge__part">⚠ {strategy}</span> <span className="badge__part">(UNSAFE: oversells)</span>
        </>
      ) : (
        strategy
      )}
    </span>
  );
}
