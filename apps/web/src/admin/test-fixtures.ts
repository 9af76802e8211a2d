import type { Audit, Sale, SaleDashboard } from '@flash-sale/contract';

/** Test data for the admin console's tests: valid docs/api.md shapes, overridden per test. */
export function makeSale(overrides: Partial<Sale> = {}): Sale {
  return {
    id: 's-1',
    name: 'Trail sneakers',
    description: null,
    imageUrl: null,
    priceCents: 4_999,
    stock: 100,
    remaining: 37,
    perUserLimit: 1,
    startsAt: '2030-01-15T10:00:00.000Z',
    endsAt: '2030-01-15T12:00:00.000Z',
    strategy: 'redis-lua',
    paymentTimeoutSeconds: 600,
    status: 'live',
    purpose: 'shop',
    buckets: 1,
    ...overrides,
  };
}

export function makeAudit(overrides: Partial<Audit> = {}): Audit {
  return {
    saleId: 's-1',
    stock: 100,
    remaining: 37,
    held: 55,
    ordersByStatus: { QUEUED: 8, PENDING_PAYMENT: 20, PAID: 35, CANCELLED: 4, EXPIRED: 2, FAILED: 0 },
    oversold: 0,
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

/** The API's error body (docs/api.md "Conventions"). */
export function errorBody(code: string, message = code) {
  return { error: { code, message } };
}
