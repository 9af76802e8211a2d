// Test data for the admin console's tests: valid docs/api.md shapes, overridden per test.
import type { Audit, CreateSaleRequest, Sale, SaleDashboard, WaitingRoomState } from '@flash-sale/contract';
import { http, HttpResponse } from 'msw';
import { aSale, errorBody } from '../test/api-fixtures';

export { errorBody } from '../test/api-fixtures';

/** The admin tests' sale: a fixed window in 2030, 63 of its 100 units sold. */
export function makeSale(overrides: Partial<Sale> = {}): Sale {
  return aSale({
    id: 's-1',
    name: 'Trail sneakers',
    description: null,
    remaining: 37,
    startsAt: '2030-01-15T10:00:00.000Z',
    endsAt: '2030-01-15T12:00:00.000Z',
    ...overrides,
  });
}

/** 15 January 2030 at `hours`:`minutes`, typed in the browser's zone, as the create-sale form sends it (UTC). */
const onSaleDay = (hours: number, minutes: number) => new Date(2030, 0, 15, hours, minutes).toISOString();

/** What the create-sale form sends for the sale of makeSale, two per customer, from 10:00 to 12:00. */
export function makeCreateSaleRequest(overrides: Partial<CreateSaleRequest> = {}): CreateSaleRequest {
  const { name, priceCents, stock, strategy, paymentTimeoutSeconds } = makeSale();
  const window = { startsAt: onSaleDay(10, 0), endsAt: onSaleDay(12, 0) };
  return { name, priceCents, stock, perUserLimit: 2, ...window, strategy, paymentTimeoutSeconds, ...overrides };
}

export function makeAudit(overrides: Partial<Audit> = {}): Audit {
  return {
    saleId: 's-1',
    stock: 100,
    remaining: 37,
    held: 55,
    ordersByStatus: { QUEUED: 8, PENDING_PAYMENT: 20, PAID: 35, CANCELLED: 4, EXPIRED: 2, FAILED: 0 },
    oversold: 0,
    oversoldPeak: 0,
    duplicateOrders: 0,
    lostReservations: 0,
    ok: true,
    drift: 0,
    checkedAt: '2030-01-15T10:05:00.000Z',
    ...overrides,
  };
}

export function makeDashboard(overrides: Partial<SaleDashboard> = {}): SaleDashboard {
  return {
    sale: makeSale(),
    audit: makeAudit(),
    handoff: { unwritten: 12, beingWritten: 3, failedJobs: 0 },
    purchases: 69,
    sampledAt: '2030-01-15T10:05:00.000Z',
    ...overrides,
  };
}

/** A handler: the API refuses the sale's dashboard with `code` and `status`. */
export function dashboardRefused(saleId: string, code: string, status: number) {
  return http.get(`/api/admin/sales/${saleId}/dashboard`, () => HttpResponse.json(errorBody(code), { status }));
}

/** A busy room: 1,200 waiting, admitting 50 per second (measured a little under), 180 of at most 200 shopping. */
export function makeRoomState(overrides: Partial<WaitingRoomState> = {}): WaitingRoomState {
  return {
    waiting: 1_200,
    admitted: 640,
    shopping: 180,
    admitPerSecond: 50,
    maxShopping: 200,
    measuredAdmitPerSecond: 48.6,
    estimatedDrainSeconds: 25,
    ...overrides,
  };
}
