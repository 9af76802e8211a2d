import { useQueries, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import type { Session } from '@flash-sale/contract';
import { OrderStatusBadge } from '../components/badges';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatDateTime, formatMoney } from '../components/format';
import { RequireGuest } from './RequireGuest';

export function OrdersPage() {
  return (
    <>
      <div className="page-header">
        <div>
          <h1>My orders</h1>
          <p>Newest first. Orders awaiting payment expire if they are not paid in time.</p>
        </div>
      </div>
      <RequireGuest>{(guest) => <OrderList guest={guest} />}</RequireGuest>
    </>
  );
}

function OrderList({ guest }: { guest: Session }) {
  const orders = useQuery({
    queryKey: queryKeys.orders(guest.user.id),
    queryFn: ({ signal }) => api.listOrders(guest.token, signal),
    // A QUEUED order becomes PENDING_PAYMENT within moments; keep the list honest meanwhile.
    refetchInterval: (query) => (query.state.data?.some((order) => order.status === 'QUEUED') ? 1_000 : 10_000),
  });
  // Each sale by id: the storefront's list leaves out ended sales, whose orders are still the buyer's.
  const saleIds = [...new Set((orders.data ?? []).map((order) => order.saleId))];
  const sales = useQueries({
    queries: saleIds.map((saleId) => ({
      queryKey: queryKeys.sale(saleId),
      queryFn: ({ signal }: { signal: AbortSignal }) => api.getSale(saleId, signal),
      staleTime: 60_000,
    })),
  });
  const saleName = (saleId: string) => sales[saleIds.indexOf(saleId)]?.data?.name ?? `Sale ${saleId}`;

  if (orders.isPending) return <p aria-live="polite">Loading your orders…</p>;
  if (orders.isError) return <ErrorNotice error={orders.error} title="Could not load your orders" />;
  if (orders.data.length === 0) {
    return (
      <div className="empty-state card">
        <h2>No orders yet</h2>
        <p>When you buy something, it shows up here.</p>
        <Link className="button" to="/">
          Browse the sales
        </Link>
      </div>
    );
  }
  return (
    <div className="card table-wrap">
      <table className="table table--cards">
        <caption className="visually-hidden">Your orders</caption>
        <thead>
          <tr>
            <th scope="col">Order</th>
            <th scope="col">Status</th>
            <th scope="col">Sale</th>
            <th scope="col">Placed</th>
            <th scope="col" className="number">
              Qty
            </th>
            <th scope="col" className="number">
              Total
            </th>
          </tr>
        </thead>
        <tbody>
          {orders.data.map((order) => (
            <tr key={order.orderNo}>
              <td data-label="Order">
                <Link className="mono" to={`/orders/${encodeURIComponent(order.orderNo)}`}>
                  {order.orderNo}
                </Link>
              </td>
              <td data-label="Status">
                <OrderStatusBadge status={order.status} />
              </td>
              <td data-label="Sale">
                <Link to={`/sales/${encodeURIComponent(order.saleId)}`}>{saleName(order.saleId)}</Link>
              </td>
              <td data-label="Placed">{formatDateTime(order.createdAt)}</td>
              <td data-label="Qty" className="number">
                {order.quantity}
              </td>
              <td data-label="Total" className="number">
                {formatMoney(order.amountCents)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
