import { ORDER_STATUSES, type OrdersByStatus } from '@flash-sale/contract';
import { useId } from 'react';
import { OrderStatusBadge } from '../components/badges';
import { numeric, TableHead } from '../components/Table';

/** How many of the sale's orders are in each status, in the order an order moves through them. */
export function OrdersByStatusTable({ ordersByStatus }: { ordersByStatus: OrdersByStatus }) {
  const headingId = useId();
  return (
    <section className="card panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Orders by status</h2>
      <div className="table-wrap">
        <table className="table" aria-labelledby={headingId}>
          <TableHead columns={['Status', numeric('Orders')]} />
          <tbody>
            {ORDER_STATUSES.map((status) => (
              <tr key={status}>
                <th scope="row">
                  <span className="order-status-cell">
                    <OrderStatusBadge status={status} />
                    <code>{status}</code>
                  </span>
                </th>
                <td className="number">{(ordersByStatus[status] ?? 0).toLocaleString('en-US')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
