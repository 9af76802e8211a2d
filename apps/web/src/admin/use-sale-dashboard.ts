import { ErrorCode } from '@flash-sale/contract';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { isApiError } from '../api/api-error';
import { api, queryKeys } from '../api/endpoints';
import { asAdmin } from './admin-request';
import { addSample, type DashboardHistory } from './purchase-rate';

/** One sample a second: fast enough to watch a sale sell out, slow enough for the audit it recomputes. */
export const DASHBOARD_POLL_MS = 1_000;

/**
 * Polls `GET /api/admin/sales/:id/dashboard`. The cached data is the sample history, not only the
 * latest sample: each fetch appends to what the cache holds, so the purchases-per-second series needs
 * no component state and survives leaving the page and coming back.
 */
export function useSaleDashboard(saleId: string) {
  const queryClient = useQueryClient();
  const queryKey = queryKeys.dashboard(saleId);
  return useQuery({
    queryKey,
    queryFn: async ({ signal }): Promise<DashboardHistory> => {
      const sample = await asAdmin((token) => api.saleDashboard(saleId, token, signal));
      return addSample(queryClient.getQueryData<DashboardHistory>(queryKey), sample);
    },
    // An unknown sale stays unknown; any other failure (a restart, a blip) is worth polling through.
    refetchInterval: (query) => (isApiError(query.state.error, ErrorCode.SaleNotFound) ? false : DASHBOARD_POLL_MS),
  });
}
