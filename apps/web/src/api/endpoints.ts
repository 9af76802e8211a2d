import { apiDownload, apiRequest } from './client';
import type {
  AdminOrderPage,
  Audit,
  CreateDemoRunRequest,
  DemoRunReport,
  UpdateSaleRequest,
  CreateSaleRequest,
  Session,
  Order,
  PurchaseAccepted,
  Sale,
  SaleDashboard,
  SalePurpose,
  SubmitToken,
  Ticket,
  WaitingRoomState,
} from '@flash-sale/contract';

/** Every route of docs/api.md the storefront and the admin console use, typed. */
export const api = {
  signInGuest: (name: string) => apiRequest<Session>('/auth/guest', { method: 'POST', body: { name } }),
  register: (name: string, password: string, guestToken?: string) =>
    apiRequest<Session>('/auth/register', { method: 'POST', body: { name, password }, token: guestToken }),
  signIn: (name: string, password: string) =>
    apiRequest<Session>('/auth/login', { method: 'POST', body: { name, password } }),
  signInAdmin: (password: string) =>
    apiRequest<{ token: string }>('/auth/admin', { method: 'POST', body: { password } }),

  listSales: (signal?: AbortSignal) => apiRequest<Sale[]>('/sales', { signal }),
  getSale: (saleId: string, signal?: AbortSignal) =>
    apiRequest<Sale>(`/sales/${encodeURIComponent(saleId)}`, { signal }),

  /** `pass`: the admission pass of a sale with a waiting room (docs/api.md "The waiting room"). */
  fetchSubmitToken: (saleId: string, token: string, pass?: string) =>
    apiRequest<SubmitToken>(`/sales/${encodeURIComponent(saleId)}/tokens`, {
      method: 'POST',
      token,
      ...(pass === undefined ? {} : { body: { pass } }),
    }),
  joinWaitingRoom: (saleId: string, token: string, signal?: AbortSignal) =>
    apiRequest<Ticket>(`/sales/${encodeURIComponent(saleId)}/queue`, { method: 'POST', token, signal }),
  ticket: (saleId: string, token: string, signal?: AbortSignal) =>
    apiRequest<Ticket>(`/sales/${encodeURIComponent(saleId)}/queue`, { token, signal }),
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

  /** Every sale, test data and ended ones included (the storefront's `/sales` has neither), or one purpose's. */
  listAdminSales: (purpose: SalePurpose | undefined, adminToken: string, signal?: AbortSignal) =>
    apiRequest<Sale[]>(purpose ? `/admin/sales?purpose=${encodeURIComponent(purpose)}` : '/admin/sales', {
      token: adminToken,
      signal,
    }),
  createSale: (input: CreateSaleRequest, adminToken: string) =>
    apiRequest<Sale>('/admin/sales', { method: 'POST', body: input, token: adminToken }),
  preloadSale: (saleId: string, adminToken: string) =>
    apiRequest<Sale>(`/admin/sales/${encodeURIComponent(saleId)}/preload`, { method: 'POST', token: adminToken }),
  auditSale: (saleId: string, adminToken: string, signal?: AbortSignal) =>
    apiRequest<Audit>(`/admin/sales/${encodeURIComponent(saleId)}/audit`, { token: adminToken, signal }),
  updateSale: (saleId: string, input: UpdateSaleRequest, adminToken: string) =>
    apiRequest<Sale>(`/admin/sales/${encodeURIComponent(saleId)}`, { method: 'PATCH', body: input, token: adminToken }),
  saleOrders: (
    saleId: string,
    query: { status?: string; q?: string; cursor?: string },
    adminToken: string,
    signal?: AbortSignal,
  ) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
    const search = params.size > 0 ? `?${params.toString()}` : '';
    return apiRequest<AdminOrderPage>(`/admin/sales/${encodeURIComponent(saleId)}/orders${search}`, {
      token: adminToken,
      signal,
    });
  },
  saleOrdersCsv: (saleId: string, adminToken: string) =>
    apiDownload(`/admin/sales/${encodeURIComponent(saleId)}/orders.csv`, { token: adminToken }),
  startDemoRun: (input: CreateDemoRunRequest, adminToken: string) =>
    apiRequest<{ id: string }>('/admin/demo-runs', { method: 'POST', body: input, token: adminToken }),
  demoRun: (id: string, adminToken: string, signal?: AbortSignal) =>
    apiRequest<DemoRunReport>(`/admin/demo-runs/${encodeURIComponent(id)}`, { token: adminToken, signal }),
  demoRuns: (adminToken: string, signal?: AbortSignal) =>
    apiRequest<DemoRunReport[]>('/admin/demo-runs', { token: adminToken, signal }),
  saleDashboard: (saleId: string, adminToken: string, signal?: AbortSignal) =>
    apiRequest<SaleDashboard>(`/admin/sales/${encodeURIComponent(saleId)}/dashboard`, { token: adminToken, signal }),
  waitingRoomState: (saleId: string, adminToken: string, signal?: AbortSignal) =>
    apiRequest<WaitingRoomState>(`/admin/sales/${encodeURIComponent(saleId)}/queue`, { token: adminToken, signal }),
};

/** TanStack Query keys, in one place so a mutation invalidates exactly what it changed. */
export const queryKeys = {
  sales: ['sales'] as const,
  adminSales: (purpose: SalePurpose | undefined) => ['sales', 'admin', purpose ?? 'all'] as const,
  sale: (saleId: string) => ['sales', saleId] as const,
  orders: (userId: string) => ['orders', userId] as const,
  order: (orderNo: string) => ['order', orderNo] as const,
  dashboard: (saleId: string) => ['admin', 'dashboard', saleId] as const,
  waitingRoomState: (saleId: string) => ['admin', 'waiting-room', saleId] as const,
  saleOrders: (saleId: string, status: string, q: string) => ['admin', 'orders', saleId, status, q] as const,
  demoRuns: ['admin', 'demo-runs'] as const,
  demoRun: (id: string) => ['admin', 'demo-runs', id] as const,
};
