import type { Order, OrderStatus, Session } from '@flash-sale/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId } from 'react';
import { Link } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import { orderStatusLabel } from '../components/badges';
import { Countdown } from '../components/Countdown';
import { ErrorNotice, QueryProgress } from '../components/ErrorNotice';
import { formatDateTime, formatMoney } from '../components/format';

/** How often a QUEUED order is asked about: the worker writes it within milliseconds to seconds. */
const QUEUED_POLL_MS = 500;
/** While awaiting payment the order can still expire (or be paid from another tab). */
const PENDING_POLL_MS = 5_000;

const STEPS: { label: string; reached: readonly OrderStatus[] }[] = [
  { label: 'Reserved', reached: ['QUEUED', 'PENDING_PAYMENT', 'PAID'] },
  { label: 'Confirmed', reached: ['PENDING_PAYMENT', 'PAID'] },
  { label: 'Paid', reached: ['PAID'] },
];

/**
 * Follows one order from QUEUED (reserved in Redis, its MySQL row on the way) to PENDING_PAYMENT,
 * then lets the owner pay or cancel. Polls while the order can still change by itself. `compact`: on
 * the sale's own page, which already names the sale; elsewhere the order names and links its sale.
 */
export function OrderTracker({
  orderNo,
  guest,
  initial,
  compact = false,
}: {
  orderNo: string;
  guest: Session;
  initial?: Order;
  compact?: boolean;
}) {
  const queryClient = useQueryClient();
  const headingId = useId();
  const order = useQuery({
    queryKey: queryKeys.order(orderNo),
    queryFn: ({ signal }) => api.getOrder(orderNo, guest.token, signal),
    initialData: initial,
    refetchInterval: (query) => {
      const status = query.state.data?.status;
      if (status === 'QUEUED') return QUEUED_POLL_MS;
      if (status === 'PENDING_PAYMENT') return PENDING_POLL_MS;
      return false;
    },
  });

  // Each change of this order's status (written, paid, expired) moves what the shopper holds: the
  // "my orders" list — and the per-user limit shown from it — follows.
  const status = order.data?.status;
  useEffect(() => {
    if (status) void queryClient.invalidateQueries({ queryKey: queryKeys.orders(guest.user.id) });
  }, [status, queryClient, guest.user.id]);

  const saleId = order.data?.saleId ?? '';
  const sale = useQuery({
    queryKey: queryKeys.sale(saleId),
    queryFn: ({ signal }) => api.getSale(saleId, signal),
    enabled: !compact && saleId !== '',
  });

  const settle = (updated: Order) => {
    queryClient.setQueryData(queryKeys.order(orderNo), updated);
    void queryClient.invalidateQueries({ queryKey: queryKeys.orders(guest.user.id) });
    void queryClient.invalidateQueries({ queryKey: queryKeys.sale(updated.saleId) });
  };
  const pay = useMutation({
    mutationFn: () => api.payOrder(orderNo, guest.token),
    onSuccess: settle,
    onError: () => void order.refetch(), // e.g. it expired meanwhile: show what it is now
  });
  const cancel = useMutation({
    mutationFn: () => api.cancelOrder(orderNo, guest.token),
    onSuccess: settle,
    onError: () => void order.refetch(),
  });

  if (!order.isSuccess) {
    return <QueryProgress query={order} loading="Loading your order…" failed="Could not load the order" />;
  }
  const current = order.data;
  const busy = pay.isPending || cancel.isPending;

  return (
    <section className="card order-summary" aria-labelledby={headingId}>
      <h2 id={headingId}>Your order</h2>
      {!compact && (
        <p className="order-summary__sale">
          <Link to={`/sales/${encodeURIComponent(current.saleId)}`}>{sale.data?.name ?? `Sale ${current.saleId}`}</Link>
        </p>
      )}
      <ol className="order-progress" aria-label="Order progress">
        {STEPS.map((step, index) => {
          const reached = step.reached.includes(current.status);
          const next = STEPS[index + 1];
          const isCurrent = reached && !(next && next.reached.includes(current.status));
          return (
            <li
              key={step.label}
              data-state={isCurrent ? 'current' : reached ? 'done' : 'todo'}
              aria-current={isCurrent ? 'step' : undefined}
            >
              {step.label}
            </li>
          );
        })}
      </ol>
      <p role="status" aria-live="polite" className="order-summary__status">
        <strong>{orderStatusLabel(current.status)}</strong>
        {current.status === 'QUEUED' && ' — your unit is reserved; we are writing your order.'}
        {current.status === 'PAID' && current.paidAt && ` on ${formatDateTime(current.paidAt)}. Thank you!`}
        {current.status === 'EXPIRED' && ' — payment did not arrive in time, so the unit went back on sale.'}
        {current.status === 'CANCELLED' && ' — the unit went back on sale.'}
        {current.status === 'FAILED' && ' — we could not confirm this order; nothing was charged.'}
      </p>
      {pay.isError && <ErrorNotice error={pay.error} title="Payment did not go through" />}
      {cancel.isError && <ErrorNotice error={cancel.error} title="Could not cancel" />}
      {current.status === 'PENDING_PAYMENT' && (
        <div className="button-row">
          <button type="button" className="button" onClick={() => pay.mutate()} disabled={busy}>
            {pay.isPending ? 'Paying…' : `Pay ${formatMoney(current.amountCents)}`}
          </button>
          <button type="button" className="button button--secondary" onClick={() => cancel.mutate()} disabled={busy}>
            {cancel.isPending ? 'Cancelling…' : 'Cancel order'}
          </button>
        </div>
      )}
      <dl className="facts">
        <dt>Order number</dt>
        <dd className="mono">{current.orderNo}</dd>
        <dt>Quantity</dt>
        <dd>{current.quantity}</dd>
        <dt>Total</dt>
        <dd>{formatMoney(current.amountCents)}</dd>
        {current.status === 'PENDING_PAYMENT' && current.expiresAt && (
          <>
            <dt>Pay within</dt>
            <dd>
              <Countdown to={current.expiresAt} label="" done="time is up" />
            </dd>
          </>
        )}
        {current.paymentReference && (
          <>
            <dt>Payment reference</dt>
            <dd className="mono">{current.paymentReference}</dd>
          </>
        )}
      </dl>
    </section>
  );
}
