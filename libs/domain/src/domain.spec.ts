import { auditVerdict, type AuditFacts } from './audit';
import { compareBooks } from './books';
import { canTransition, ORDER_STATUSES } from './order';
import { OrderNumberGenerator, saleIdOfOrderNumber } from './order-number';
import { saleStatus } from './sale';

describe('order state machine', () => {
  it.each([
    ['QUEUED', 'PENDING_PAYMENT'],
    ['QUEUED', 'FAILED'],
    ['PENDING_PAYMENT', 'PAID'],
    ['PENDING_PAYMENT', 'CANCELLED'],
    ['PENDING_PAYMENT', 'EXPIRED'],
  ] as const)('allows %s → %s', (from, to) => expect(canTransition(from, to)).toBe(true));

  it('allows nothing else: final states are final, no skipping, no going back', () => {
    const allowed = new Set([
      'QUEUED>PENDING_PAYMENT',
      'QUEUED>FAILED',
      'PENDING_PAYMENT>PAID',
      'PENDING_PAYMENT>CANCELLED',
      'PENDING_PAYMENT>EXPIRED',
    ]);
    for (const from of ORDER_STATUSES) {
      for (const to of ORDER_STATUSES) {
        expect(canTransition(from, to)).toBe(allowed.has(`${from}>${to}`));
      }
    }
  });
});

describe('sale status', () => {
  const window = { startsAt: new Date('2026-01-01T10:00:00Z'), endsAt: new Date('2026-01-01T11:00:00Z') };
  it('is decided by time first, then by what is left', () => {
    expect(saleStatus(window, 5, new Date('2026-01-01T09:59:59Z'))).toBe('upcoming');
    expect(saleStatus(window, 5, new Date('2026-01-01T10:00:00Z'))).toBe('live');
    expect(saleStatus(window, 0, new Date('2026-01-01T10:30:00Z'))).toBe('sold_out');
    expect(saleStatus(window, 5, new Date('2026-01-01T11:00:00Z'))).toBe('ended');
    expect(saleStatus(window, 0, new Date('2026-01-01T12:00:00Z'))).toBe('ended');
  });
});

describe('order numbers', () => {
  it('are unique and ordered within a process, and carry their sale', () => {
    const generator = new OrderNumberGenerator();
    const numbers = Array.from({ length: 10_000 }, () => generator.next('42'));
    expect(new Set(numbers).size).toBe(numbers.length);
    expect([...numbers].sort()).toEqual(numbers);
    expect(numbers.every((orderNo) => saleIdOfOrderNumber(orderNo) === '42')).toBe(true);
  });

  it('do not collide across independent generators (separate API instances)', () => {
    const instances = Array.from({ length: 8 }, () => new OrderNumberGenerator());
    const numbers = instances.flatMap((generator) => Array.from({ length: 2_000 }, () => generator.next('7')));
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it('rejects strings that are not order numbers', () => {
    for (const text of [
      '',
      'S0-01JD5XK3Q8R5J7Z2W4N6M8P0TA',
      'S1-short',
      '42',
      'S1-01JD5XK3Q8R5J7Z2W4N6M8P0TAX',
      'S1-01JD5XK3Q8R5J7Z2W4N6M8P0TU',
    ]) {
      expect(saleIdOfOrderNumber(text)).toBeUndefined();
    }
  });
});

describe('audit verdict', () => {
  const balanced: AuditFacts = {
    stock: 10,
    held: 5,
    mysqlAvailable: 3,
    mysqlLeased: 2,
    inDoubt: 0,
    drift: 0,
    unitsAboveUserLimit: 0,
    ordersWithoutOwnReservation: 0,
    lostReservations: 0,
    recordedOversoldPeak: 0,
  };

  it('is ok when nothing is oversold, duplicated or lost and both books balance', () => {
    expect(auditVerdict(balanced)).toMatchObject({
      ok: true,
      oversold: 0,
      duplicateOrders: 0,
      redisBooksBalance: true,
      mysqlBooksBalance: true,
    });
  });

  it.each<[string, Partial<AuditFacts>, Partial<ReturnType<typeof auditVerdict>>]>([
    ['oversold', { held: 12, mysqlAvailable: 0, mysqlLeased: 0 }, { oversold: 2, oversoldPeak: 2 }],
    // Its orders expired since and the books balance again: the oversell it made is still one.
    ['an oversell given back since', { recordedOversoldPeak: 3 }, { oversold: 0, oversoldPeak: 3 }],
    ['a user above the limit', { unitsAboveUserLimit: 1 }, { duplicateOrders: 1 }],
    ['an order without its own reservation', { ordersWithoutOwnReservation: 1 }, { duplicateOrders: 1 }],
    ['a lost reservation', { lostReservations: 1 }, { lostReservations: 1 }],
    ['Redis books off by one', { drift: 1 }, { redisBooksBalance: false }],
    ['MySQL books off by one', { mysqlAvailable: 4 }, { mysqlBooksBalance: false }],
    ['leases still in doubt', { inDoubt: 2 }, { redisBooksBalance: true, mysqlBooksBalance: true }],
  ])('fails on %s', (_name, change, expected) => {
    expect(auditVerdict({ ...balanced, ...change })).toMatchObject({ ...expected, ok: false });
  });
});

describe('compareBooks', () => {
  // Stock 10, incarnation 2: 3 units held (a, b), c cancelled (back in `available`), d reserved and
  // not written yet, 5 units left in Redis's balance; MySQL leased 6 (d's unit + the balance).
  const input = {
    rows: [
      { orderNo: 'a', status: 'PAID' as const, quantity: 2, leaseEpoch: 2 },
      { orderNo: 'b', status: 'PENDING_PAYMENT' as const, quantity: 1, leaseEpoch: 2 },
      { orderNo: 'c', status: 'CANCELLED' as const, quantity: 1, leaseEpoch: 2 },
    ],
    reservations: [
      { orderNo: 'a', quantity: 2, epoch: 2 },
      { orderNo: 'b', quantity: 1, epoch: 2 },
      { orderNo: 'c', quantity: 1, epoch: 2 },
      { orderNo: 'd', quantity: 1, epoch: 2 },
    ],
    returnedInRedis: new Set(['c']),
    redisBalance: 5,
    currentEpoch: 2,
    liveLeased: 6,
    pendingLeaseUnits: 0,
  };

  it('agrees (drift 0) when Redis and MySQL tell the same story', () => {
    expect(compareBooks(input)).toMatchObject({ held: 3, unwrittenUnits: 1, ordersWithoutOwnReservation: 0, drift: 0 });
  });

  it('counts a lease MySQL made that Redis has not confirmed yet, without calling it drift', () => {
    expect(compareBooks({ ...input, liveLeased: 10, pendingLeaseUnits: 4 }).drift).toBe(0);
  });

  it('reports phantom stock (positive) and stranded units (negative)', () => {
    expect(compareBooks({ ...input, redisBalance: 7 }).drift).toBe(2);
    expect(compareBooks({ ...input, redisBalance: 4 }).drift).toBe(-1);
  });

  it('leaves reservations of earlier incarnations out of the live leases', () => {
    const reservations = [...input.reservations, { orderNo: 'old', quantity: 3, epoch: 1 }];
    expect(compareBooks({ ...input, reservations })).toMatchObject({ unwrittenUnits: 1, drift: 0 });
  });

  it('finds rows of the current incarnation without a reservation of their own', () => {
    const rows = [
      ...input.rows,
      { orderNo: 'x', status: 'PAID' as const, quantity: 1, leaseEpoch: 2 },
      { orderNo: 'sold-by-mysql', status: 'PAID' as const, quantity: 1, leaseEpoch: null },
    ];
    expect(compareBooks({ ...input, rows }).ordersWithoutOwnReservation).toBe(1);
  });
});
