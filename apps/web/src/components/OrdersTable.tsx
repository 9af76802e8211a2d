import type { Order } from '@flash-sale/contract';
import type { ReactNode } from 'react';
import { OrderStatusBadge } from './badges';
import { formatMoney, formatShortDateTime } from './format';
import { Cell, numeric, TableHead } from './Table';

/** What an orders table shows of an order, which a buyer's order and an admin's order row both have. */
type OrderRow = Pick<Order, 'orderNo' | 'status' | 'createdAt' | 'quantity' | 'amountCents'>;

interface OrdersTableProps<T extends OrderRow> {
  /** The table's accessible name. */
  caption: string;
  orders: readonly T[];
  /** The order number as shown: a link to its page for the buyer, plain for the admin. */
  orderNo: (order: T) => ReactNode;
  /** The column after the status: which sale, for the buyer; who bought, for the admin. */
  about: { label: string; cell: (order: T) => ReactNode };
}

/** Orders, one row each (a card each on a phone): number, status, sale or buyer, when, quantity, total. */
export function OrdersTable<T extends OrderRow>({ caption, orders, orderNo, about }: OrdersTableProps<T>) {
  return (
    <div className="card table-wrap">
      <table className="table table--cards">
        <caption className="visually-hidden">{caption}</caption>
        <TableHead columns={['Order', 'Status', about.label, 'Placed', numeric('Qty'), numeric('Total')]} />
        <tbody>
          {orders.map((order) => (
            <tr key={order.orderNo}>
              <Cell label="Order" className="orders-table__order-no">
                {orderNo(order)}
              </Cell>
              <Cell label="Status">
                <OrderStatusBadge status={order.status} />
              </Cell>
              <Cell label={about.label}>{about.cell(order)}</Cell>
              <Cell label="Placed" className="orders-table__placed">
                <time dateTime={order.createdAt}>{formatShortDateTime(order.createdAt)}</time>
              </Cell>
              <Cell label="Qty" numeric>
                {order.quantity}
              </Cell>
              <Cell label="Total" numeric>
                {formatMoney(order.amountCents)}
              </Cell>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
