import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, queryKeys } from '../api/endpoints';
import { type Sale, sellsFromRedis } from '@flash-sale/contract';
import { asAdmin } from './admin-request';

/**
 * `POST /api/admin/sales/:id/preload`: (re)loads the sale's stock into Redis from MySQL. Idempotent,
 * so the button can be pressed again safely; afterwards every view of the sale reads fresh numbers.
 */
export function usePreloadSale() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (sale: Pick<Sale, 'id' | 'name'>) => asAdmin((token) => api.preloadSale(sale.id, token)),
    onSuccess: (_preloaded, sale) =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.sales }),
        queryClient.invalidateQueries({ queryKey: queryKeys.dashboard(sale.id) }),
      ]),
  });
}

/**
 * Stock is loaded into Redis when a sale is created; Preload is the repair after a Redis restart or
 * flush. It means nothing once the sale has ended, nor for a strategy that sells from MySQL alone.
 */
export function canPreload(sale: Pick<Sale, 'status' | 'strategy'>): boolean {
  return sellsFromRedis(sale.strategy) && sale.status !== 'ended';
}
