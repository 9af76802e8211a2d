import { apiRequest } from './client';
import type {
  Audit,
  CreateSaleInput,
  GuestSession,
  Order,
  PurchaseAccepted,
  Sale,
  SaleDashboard,
  SubmitToken,
} from './types';

/** Every route of API.md the storefront and the admin console use, typed. */
export const api = {
  signInGuest: (name: string) => apiRequest<GuestSession>('/auth/guest', { method: 'POST', body: { name } }),
  signInAdmin: (password: string) =>
    apiRequest<{ token: string }>('/auth/admin', { method: 'POST', body: { password } }),

  listSales: (signal?: AbortSignal) => apiRequest<Sale[]>('/sales', { signal }),
  getSale: (saleId: string, signal?: AbortSignal) =>
    apiRequest<Sale>(`/sales/${encodeURIComponent(saleId)}`, { signal }),

  fetchSubmitToken: (saleId: string, token: string) =>
    apiRequest<SubmitToken>(`/sales/${encodeURIComponent(saleId)}/tokens`, { method: 'POST', token }),
  purchase: (saleId: string, submitToken: string, quantity: number, token: string) =>
    apiRequest<PurchaseAccepted>(`/sales/${encodeURIComponent(saleId)}/purchase`, {
      method: 'POST',
      body: { token: submitToken, quantity },
      token,
    }),

  listOrders: (token: string, signal?: AbortSignal) => apiRequest<Order[]>('/orders', { token, signal }),
  getOrder: (orderNo: string, token: string, signal?: AbortSignal) =>
    apiRequest<Order>(`/orders/${encodeURIComponent(orderNo)}`, { token, signal }),
  payOrder: (orderNo: string, token: string) =>
    apiRequest<Order>(`/orders/${encodeURIComponent(orderNo)}/pay`, { method: 'POST', token }),
  cancelOrder: (orderNo: string, token: string) =>
    apiRequest<Order>(`/orders/${encodeURIComponent(orderNo)}/cancel`, { method: 'POST', token }),

  createSale: (input: CreateSaleInput, adminToken: string) =>
    apiRequest<Sale>('/admin/sales', { method: 'POST', body: input, token: adminToken }),
  preloadSale: (saleId: string, adminToken: string) =>
    apiRequest<Sale>(`/admin/sales/${encodeURIComponent(saleId)}/preload`, { method: 'POST', token: adminToken }),
  auditSale: (saleId: string, adminToken: string, signal?: AbortSignal) =>
    apiRequest<Audit>(`/admin/sales/${encodeURIComponent(saleId)}/audit`, { token: adminToken, signal }),
  saleDashboard: (saleId: string, adminToken: string, signal?: AbortSignal) =>
    apiRequest<SaleDashboard>(`/admin/sales/${encodeURIComponent(saleId)}/dashboard`, { token: adminToken, signal }),
};

/** TanStack Query keys, in one place so a mutation invalidates exactly what it changed. */
export const queryKeys = {
  sales: ['sales'] as const,
  sale: (saleId: string) => ['sales', saleId] as const,
  orders: (userId: string) => ['orders', userId] as const,
  order: (orderNo: string) => ['order', orderNo] as const,
  dashboard: (saleId: string) => ['admin', 'dashboard', saleId] as const,
};
