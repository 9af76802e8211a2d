import { useQuery } from '@tanstack/react-query';
import { api, queryKeys } from '../api/endpoints';
import type { Session, Order } from '@flash-sale/contract';

/** Orders that hold units: they count against the per-user limit. */
const HOLDING: readonly Order['status'][] = ['QUEUED', 'PENDING_PAYMENT', 'PAID'];

/**
 * The signed-in shopper's orders in one sale (newest first) and the units they hold there. Shares the
 * "my orders" query, so the sale page, its buy panel and the orders page read one cache.
 */
export function useMyOrdersInSale(saleId: string, guest: Session | null) {
  const myOrders = useQuery({
    queryKey: queryKeys.orders(guest?.user.id ?? ''),
    queryFn: ({ signal }) => api.listOrders(guest?.token ?? '', signal),
    enabled: guest !== null,
  });
  const mine = myOrders.data?.filter((order) => order.saleId === saleId) ?? [];
  const held = mine.filter((order) => HOLDING.includes(order.status)).reduce((sum, order) => sum + order.quantity, 0);
  // `loaded`: whether `held` is known yet (or could not be: the count then stays 0).
  return { mine, held, loaded: !myOrders.isPending };
}
