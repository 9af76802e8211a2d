import { QueryClient } from '@tanstack/react-query';
import { ErrorCode } from '@flash-sale/contract';
import { isApiError } from './api/api-error';

/**
 * Reads retry on network trouble and 5xx, never on a refusal (a 404 stays a 404). Mutations never
 * retry on their own: a purchase is retried only by the buy flow, with the same submit token.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 2_000,
        retry: (failureCount, error) =>
          failureCount < 3 &&
          (!isApiError(error) || error.status === 0 || error.status >= 500 || error.code === ErrorCode.RateLimited),
      },
      mutations: { retry: false },
    },
  });
}
