import { useQuery } from '@tanstack/react-query';
import { api, queryKeys } from '../api/endpoints';
import { QueryProgress } from '../components/ErrorNotice';
import { SaleCard } from './SaleCard';

/** The shop window: every sale, live ones first, refreshed every few seconds so stock counts move. */
export function SalesPage() {
  const sales = useQuery({
    queryKey: queryKeys.sales,
    queryFn: ({ signal }) => api.listSales(signal),
    refetchInterval: 3_000,
  });

  const order = { live: 0, upcoming: 1, sold_out: 2, ended: 3 } as const;
  const sorted = [...(sales.data ?? [])].sort(
    (a, b) => order[a.status] - order[b.status] || Date.parse(a.startsAt) - Date.parse(b.startsAt),
  );

  return (
    <>
      <div className="page-header">
        <div>
          <h1>Flash sales</h1>
          <p>Limited stock, fair for everyone: one click reserves your unit, no overselling.</p>
        </div>
      </div>
      <QueryProgress query={sales} loading="Loading sales…" failed="Could not load the sales" />
      {sales.isSuccess && sorted.length === 0 && (
        <div className="empty-state card">
          <h2>No sales yet</h2>
          <p>Check back soon — or create one in the admin console.</p>
        </div>
      )}
      {sorted.length > 0 && (
        <ul className="sale-grid" aria-label="Sales">
          {sorted.map((sale) => (
            <li key={sale.id}>
              <SaleCard sale={sale} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
