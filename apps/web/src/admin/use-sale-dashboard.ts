import { ErrorCode } from '@flash-sale/contract';
import { useQuery } from '@tanstack/react-query';
import { isApiError } from '../api/api-error';
import { api, queryKeys } from '../api/endpoints';
import { asAdmin } from './admin-request';

/** One sample a second: fast enough to watch a sale sell out, slow enough for the audit it recomputes. */
export const DASHBOARD_POLL_MS = 1_000;

/**
 * Polls `GET /api/admin/sales/:id/dashboard`. Each sample carries its own per-second history (the last
 * two minutes of orders), so the chart needs nothing kept between samples and a reload loses nothing.
 */
export function useSaleDashboard(saleId: string) {
  return useQuery({
    queryKey: queryKeys.dashboard(saleId),
    queryFn: ({ signal }) => asAdmin((token) => api.saleDashboard(saleId, token, signal)),
    // An unknown sale stays unknown; any other failure (a restart, a blip) is worth polling through.
    refetchInterval: (query) => (isApiError(query.state.error, ErrorCode.SaleNotFound) ? false : DASHBOARD_POLL_MS),
  });
}
