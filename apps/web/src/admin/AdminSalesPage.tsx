import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import { SALE_PURPOSES, type Sale, type SalePurpose } from '@flash-sale/contract';
import { asAdmin } from './admin-request';
import { SaleStatusBadge, StrategyBadge } from '../components/badges';
import { QueryProgress } from '../components/ErrorNotice';
import { formatDateTime } from '../components/format';
import { numeric, TableHead } from '../components/Table';
import { PreloadNotice } from './PreloadNotice';
import { canPreload, usePreloadSale } from './use-preload-sale';

const PURPOSE_LABELS: Record<SalePurpose, string> = {
  shop: 'Shop',
  'load-test': 'Load test (k6)',
  bench: 'Bench',
  demo: 'Demo',
};

function purposeOf(value: string | null): SalePurpose | undefined {
  return SALE_PURPOSES.find((purpose) => purpose === value);
}

/**
 * Every sale — the shop's and the test data of k6, the bench and the demo, ended ones too — newest
 * start first, filterable by purpose (kept in the URL), with a way into its dashboard and a Preload button per sale Redis still sells.
 */
export function AdminSalesPage() {
  const [params, setParams] = useSearchParams();
  const purpose = purposeOf(params.get('purpose'));
  const filterId = useId();
  const sales = useQuery({
    queryKey: queryKeys.adminSales(purpose),
    queryFn: ({ signal }) => asAdmin((token) => api.listAdminSales(purpose, token, signal)),
    refetchInterval: 5_000,
  });
  const preload = usePreloadSale();
  const sorted = [...(sales.data ?? [])].sort((a, b) => Date.parse(b.startsAt) - Date.parse(a.startsAt));

  return (
    <>
      <div className="page-header">
        <div>
          <h1>Sales</h1>
          <p>
            Open a sale for its live dashboard. A sale’s stock is in Redis from its creation; Preload reloads it from
            MySQL after a Redis restart.
          </p>
        </div>
        <Link to="/admin/sales/new" className="button">
          New sale
        </Link>
      </div>
      <div className="admin-sales-filter">
        <label htmlFor={filterId}>Show</label>{' '}
        <select
          id={filterId}
          value={purpose ?? ''}
          onChange={(event) => setParams(event.target.value ? { purpose: event.target.value } : {})}
        >
          <option value="">All sales</option>
          {SALE_PURPOSES.map((p) => (
            <option key={p} value={p}>
              {PURPOSE_LABELS[p]}
            </option>
          ))}
        </select>
      </div>
      <PreloadNotice preload={preload} />
      <QueryProgress query={sales} loading="Loading sales…" failed="Could not load the sales" />
      {sales.isSuccess && sorted.length === 0 && (
        <div className="empty-state card">
          <h2>No sales yet</h2>
          <p>Create one and open its dashboard to watch it sell.</p>
          <Link to="/admin/sales/new" className="button">
            Create a sale
          </Link>
        </div>
      )}
      {sorted.length > 0 && (
        <div className="card table-wrap">
          <table className="table admin-sales-table">
            <caption className="visually-hidden">All sales</caption>
            <TableHead
              columns={[
                'Name',
                'Strategy',
                'Purpose',
                'Status',
                numeric('Remaining'),
                'Starts',
                'Ends',
                { label: <span className="visually-hidden">Actions</span>, key: 'actions' },
              ]}
            />
            <tbody>
              {sorted.map((sale) => (
                <SaleRow
                  key={sale.id}
                  sale={sale}
                  preloading={preload.isPending && preload.variables.id === sale.id}
                  onPreload={() => preload.mutate(sale)}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

interface SaleRowProps {
  sale: Sale;
  preloading: boolean;
  onPreload: () => void;
}

function SaleRow({ sale, preloading, onPreload }: SaleRowProps) {
  const nameId = useId();
  return (
    <tr>
      <th scope="row" id={nameId}>
        <Link to={`/admin/sales/${encodeURIComponent(sale.id)}`}>{sale.name}</Link>
      </th>
      <td>
        <StrategyBadge strategy={sale.strategy} />
      </td>
      <td>{PURPOSE_LABELS[sale.purpose] ?? sale.purpose}</td>
      <td>
        <SaleStatusBadge status={sale.status} />
      </td>
      <td className="number">
        {sale.remaining.toLocaleString('en-US')} / {sale.stock.toLocaleString('en-US')}
      </td>
      <td>
        <time dateTime={sale.startsAt}>{formatDateTime(sale.startsAt)}</time>
      </td>
      <td>
        <time dateTime={sale.endsAt}>{formatDateTime(sale.endsAt)}</time>
      </td>
      <td>
        {/* Named "Preload" like every row's; the description says which sale. */}
        {canPreload(sale) && (
          <button
            type="button"
            className="button button--secondary button--small"
            onClick={onPreload}
            disabled={preloading}
            aria-describedby={nameId}
          >
            {preloading ? 'Preloading…' : 'Preload'}
          </button>
        )}
      </td>
    </tr>
  );
}
