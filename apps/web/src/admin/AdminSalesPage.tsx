import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import { SALE_PURPOSES, type Sale, type SalePurpose } from '@flash-sale/contract';
import { asAdmin } from './admin-request';
import { SaleStatusBadge, StrategyBadge } from '../components/badges';
import { QueryProgress } from '../components/ErrorNotice';
import { formatShortDateTime, formatShortEnd } from '../components/format';
import { Cell, numeric, TableHead } from '../components/Table';
import { PreloadNotice } from './PreloadNotice';
import { canPreload, usePreloadSale } from './use-preload-sale';

const PURPOSE_LABELS: Record<SalePurpose, string> = {
  shop: 'Shop',
  'load-test': 'Load test (k6)',
  bench: 'Bench',
  demo: 'Demo',
  'warm-up': 'Startup warm-up',
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
          <table className="table table--cards admin-sales-table">
            <caption className="visually-hidden">All sales</caption>
            <TableHead
              columns={[
                'Sale',
                'Strategy',
                'Purpose',
                'Status',
                numeric('Remaining'),
                'Window',
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

/**
 * One sale: its name (the way into its dashboard) heads the row, and a phone's card. Start and end share
 * a column, compactly ("Nov 27, 3:36 PM", the year only when it is not this one): a 1280 px window shows
 * every column without scrolling sideways.
 */
function SaleRow({ sale, preloading, onPreload }: SaleRowProps) {
  const nameId = useId();
  return (
    <tr>
      <th scope="row" id={nameId}>
        <Link to={`/admin/sales/${encodeURIComponent(sale.id)}`}>{sale.name}</Link>
        {sale.waitingRoom && (
          <>
            {' '}
            <span className="badge badge--room" title="Buyers wait in a waiting room">
              room
            </span>
          </>
        )}
      </th>
      <Cell label="Strategy">
        <StrategyBadge strategy={sale.strategy} />
      </Cell>
      <Cell label="Purpose">{PURPOSE_LABELS[sale.purpose] ?? sale.purpose}</Cell>
      <Cell label="Status">
        <SaleStatusBadge status={sale.status} />
      </Cell>
      {/* Two pieces that may sit on two lines when a big stock needs the room. */}
      <Cell label="Remaining" numeric>
        <span className="admin-sales-table__count">{sale.remaining.toLocaleString('en-US')}</span>{' '}
        <span className="admin-sales-table__count">/ {sale.stock.toLocaleString('en-US')}</span>
      </Cell>
      <Cell label="Window">
        <span className="sale-window">
          <time dateTime={sale.startsAt}>{formatShortDateTime(sale.startsAt)}</time>{' '}
          <span>
            <span aria-hidden="true">→ </span>
            <span className="visually-hidden">to </span>
            <time dateTime={sale.endsAt}>{formatShortEnd(sale.startsAt, sale.endsAt)}</time>
          </span>
        </span>
      </Cell>
      {/* Empty for a sale that cannot be preloaded: a phone's card then shows no Actions line at all. */}
      <Cell label="Actions" className="admin-sales-table__actions">
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
      </Cell>
    </tr>
  );
}
