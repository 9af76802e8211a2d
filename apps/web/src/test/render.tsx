import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import type { Session } from '@flash-sale/contract';
import { routes } from '../routes';
import { sessionStore } from '../session/session-store';

export const TEST_GUEST: Session = { token: 'guest-jwt', user: { id: 'u-1', name: 'Ada', registered: false } };

/** Mounts the real route table at `path`, with a fresh query cache and, optionally, a signed-in guest/admin. */
export function renderApp(path: string, options: { guest?: Session | null; adminToken?: string | null } = {}) {
  sessionStore.setGuest(options.guest === undefined ? TEST_GUEST : options.guest);
  sessionStore.setAdminToken(options.adminToken ?? null);
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const view = render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return { ...view, router, queryClient };
}
