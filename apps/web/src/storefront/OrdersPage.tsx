import { useQueries, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import type { Session } from '@flash-sale/contract';
import { QueryProgress } from '../components/ErrorNotice';
import { OrdersTable } from '../components/OrdersTable';
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

  if (!orders.isSuccess) {
    return <QueryProgress query={orders} loading="Loading your orders…" failed="Could not load your orders" />;
  }
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
    <OrdersTable
      caption="Your orders"
      orders={orders.data}
      orderNo={(order) => (
        <Link className="mono" to={`/orders/${encodeURIComponent(order.orderNo)}`}>
          {order.orderNo}
        </Link>
      )}
      about={{
        label: 'Sale',
        cell: (order) => <Link to={`/sales/${encodeURIComponent(order.saleId)}`}>{saleName(order.saleId)}</Link>,
      }}
    />
  );
}
