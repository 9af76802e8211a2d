import type { RouteObject } from 'react-router';
import { Layout } from './components/Layout';
import { NotFoundPage } from './components/NotFoundPage';
import { OrderPage } from './storefront/OrderPage';
import { OrdersPage } from './storefront/OrdersPage';
import { SalePage } from './storefront/SalePage';
import { SalesPage } from './storefront/SalesPage';
import { SignInPage } from './storefront/SignInPage';

/**
 * Every page of the storefront and the admin console; tests mount the same table in a memory router.
 * The admin console (its form and chart libraries) is loaded only when an /admin page is opened, so a
 * shopper's first load carries the shop alone.
 */
export const routes: RouteObject[] = [
  {
    element: <Layout />,
    // Shown while a lazy page (the admin console) loads on the first visit to its URL.
    hydrateFallbackElement: (
      <p className="page" aria-live="polite">
        Loading…
      </p>
    ),
    children: [
      { index: true, element: <SalesPage /> },
      { path: 'sales/:saleId', element: <SalePage /> },
      { path: 'orders', element: <OrdersPage /> },
      { path: 'orders/:orderNo', element: <OrderPage /> },
      { path: 'sign-in', element: <SignInPage /> },
      {
        path: 'admin',
        lazy: async () => ({ Component: (await import('./admin/AdminLayout')).AdminLayout }),
        children: [
          { index: true, lazy: async () => ({ Component: (await import('./admin/AdminSalesPage')).AdminSalesPage }) },
          {
            path: 'sales/new',
            lazy: async () => ({ Component: (await import('./admin/CreateSalePage')).CreateSalePage }),
          },
          {
            path: 'sales/:saleId',
            lazy: async () => ({ Component: (await import('./admin/SaleDashboardPage')).SaleDashboardPage }),
          },
          {
            path: 'sales/:saleId/orders',
            lazy: async () => ({ Component: (await import('./admin/SaleOrdersPage')).SaleOrdersPage }),
          },
          {
            path: 'sales/:saleId/edit',
            lazy: async () => ({ Component: (await import('./admin/EditSalePage')).EditSalePage }),
          },
          { path: 'demo', lazy: async () => ({ Component: (await import('./admin/DemoPage')).DemoPage }) },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
