// Valid docs/api.md shapes for the tests, overridden per test.
import type { Sale, Ticket } from '@flash-sale/contract';

/** A live sale of the shop, open since a minute ago and for an hour more. */
export function aSale(overrides: Partial<Sale> = {}): Sale {
  const now = Date.now();
  return {
    id: '7',
    name: 'Limited sneakers',
    description: 'One pair per customer.',
    imageUrl: null,
    priceCents: 4999,
    stock: 100,
    remaining: 42,
    perUserLimit: 1,
    startsAt: new Date(now - 60_000).toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
    strategy: 'redis-lua',
    paymentTimeoutSeconds: 600,
    status: 'live',
    purpose: 'shop',
    buckets: 1,
    waitingRoom: null,
    ...overrides,
  };
}

/** The API's error body (docs/api.md "Conventions"). */
export function errorBody(code: string, message = code) {
  return { error: { code, message } };
}

/** A waiting ticket after the opening: third in line, about a minute and a half to wait. */
export function aTicket(overrides: Partial<Ticket> = {}): Ticket {
  return { state: 'waiting', position: 3, estimatedWaitSeconds: 90, pollAfterMs: 100, waiting: 12, ...overrides };
}

/** An admitted ticket whose pass is good for `passSeconds` more. */
export function anAdmittedTicket(pass: string, passSeconds = 120): Ticket {
  return {
    state: 'admitted',
    pass,
    passExpiresAt: new Date(Date.now() + passSeconds * 1_000).toISOString(),
    pollAfterMs: 100,
  };
}
