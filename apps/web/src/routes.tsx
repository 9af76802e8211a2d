import type { RouteObject } from 'react-router';
import { AdminLayout } from './admin/AdminLayout';
import { AdminSalesPage } from './admin/AdminSalesPage';
import { CreateSalePage } from './admin/CreateSalePage';
import { SaleDashboardPage } from './admin/SaleDashboardPage';
import { Layout } from './components/Layout';
import { NotFoundPage } from './components/NotFoundPage';
import { OrderPage } from './storefront/OrderPage';
import { OrdersPage } from './storefront/OrdersPage';
import { SalePage } from './storefront/SalePage';
import { SalesPage } from './storefront/SalesPage';
import { SignInPage } from './storefront/SignInPage';

/** Every page of the storefront and the admin console; tests mount the same table in a memory router. */
export const routes: RouteObject[] = [
  {
    element: <Layout />,
    children: [
      { index: true, element: <SalesPage /> },
      { path: 'sales/:saleId', element: <SalePage /> },
      { path: 'orders', element: <OrdersPage /> },
      { path: 'orders/:orderNo', element: <OrderPage /> },
      { path: 'sign-in', element: <SignInPage /> },
      {
        path: 'admin',
        element: <AdminLayout />,
        children: [
          { index: true, element: <AdminSalesPage /> },
          { path: 'sales/new', element: <CreateSalePage /> },
          { path: 'sales/:saleId', element: <SaleDashboardPage /> },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];
