import { ORDER_STATUSES } from '@flash-sale/contract';
import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import { orderStatusLabel } from '../components/badges';
import { ErrorNotice, QueryProgress } from '../components/ErrorNotice';
import { SelectField } from '../components/FormField';
import { OrdersTable } from '../components/OrdersTable';
import { asAdmin } from './admin-request';

/**
 * A sale's orders for its admin: filter by status, search by order number (its start), user id or
 * buyer name (an account's, or the name a guest gave), page on with "Load more" (the API's cursor), and download every order as CSV. The
 * filter and search live in the URL, so a result can be shared and survives a reload.
 */
export function SaleOrdersPage() {
  const { saleId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? '';
  const q = params.get('q') ?? '';
  const [searchText, setSearchText] = useState(q);
  const searchId = useId();

  const sale = useQuery({ queryKey: queryKeys.sale(saleId), queryFn: ({ signal }) => api.getSale(saleId, signal) });
  const orders = useInfiniteQuery({
    queryKey: queryKeys.saleOrders(saleId, status, q),
    queryFn: ({ pageParam, signal }) =>
      asAdmin((token) => api.saleOrders(saleId, { status, q, cursor: pageParam }, token, signal)),
    initialPageParam: '',
    getNextPageParam: (page) => page.next,
  });
  const download = useMutation({
    mutationFn: () => asAdmin((token) => api.saleOrdersCsv(saleId, token)),
    onSuccess: (blob) => {
      // A link to the Blob, clicked: the browser saves it under the given name.
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = `sale-${saleId}-orders.csv`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  });

  const update = (next: { status?: string; q?: string }) => {
    const merged = new URLSearchParams(params);
    for (const [key, value] of Object.entries(next)) {
      if (value) merged.set(key, value);
      else merged.delete(key);
    }
    setParams(merged, { replace: true });
  };
  const search = (event: FormEvent) => {
    event.preventDefault();
    update({ q: searchText.trim() });
  };
  const items = orders.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      <div className="page-header">
        <div>
          <p className="admin-small">
            <Link to={`/admin/sales/${encodeURIComponent(saleId)}`}>← Dashboard</Link>
          </p>
          <h1>Orders{sale.data ? ` — ${sale.data.name}` : ''}</h1>
          <p>Written orders, newest first. A reservation appears here once the worker has written it.</p>
        </div>
        <button type="button" className="button" onClick={() => download.mutate()} disabled={download.isPending}>
          {download.isPending ? 'Preparing…' : 'Download CSV'}
        </button>
      </div>
      {download.isError && <ErrorNotice error={download.error} title="Could not export the orders" />}
      <form className="card panel orders-filter" onSubmit={search} role="search" aria-label="Filter orders">
        <SelectField label="Status" value={status} onChange={(event) => update({ status: event.target.value })}>
          <option value="">Any status</option>
          {ORDER_STATUSES.map((value) => (
            <option key={value} value={value}>
              {orderStatusLabel(value)}
            </option>
          ))}
        </SelectField>
        <div className="field orders-filter__search">
          <label htmlFor={searchId}>Order number, user id or buyer name</label>
          <input
            id={searchId}
            className="input"
            type="search"
            value={searchText}
            maxLength={64}
            onChange={(event) => setSearchText(event.target.value)}
          />
        </div>
        <button type="submit" className="button button--secondary">
          Search
        </button>
      </form>
      <QueryProgress query={orders} loading="Loading orders…" failed="Could not load the orders" />
      {orders.isSuccess && items.length === 0 && (
        <div className="empty-state card">
          <h2>No orders{status || q ? ' match' : ' yet'}</h2>
        </div>
      )}
      {items.length > 0 && (
        <OrdersTable
          caption="Orders of the sale"
          orders={items}
          orderNo={(order) => <span className="mono">{order.orderNo}</span>}
          about={{
            label: 'Buyer',
            cell: (order) => (
              // One flex item: on a phone card the name and the id share the value's side of the card.
              <span className="order-buyer">
                <span className={`order-buyer__name${order.userName ? '' : ' admin-muted'}`}>
                  {order.userName ?? 'no name'}
                </span>
                {order.guest && <span className="order-buyer__guest admin-muted admin-small">guest</span>}{' '}
                <span className="order-buyer__id mono admin-small">{order.userId}</span>
              </span>
            ),
          }}
        />
      )}
      {orders.hasNextPage && (
        <p>
          <button
            type="button"
            className="button button--secondary"
            onClick={() => void orders.fetchNextPage()}
            disabled={orders.isFetchingNextPage}
          >
            {orders.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </button>
        </p>
      )}
    </>
  );
}
