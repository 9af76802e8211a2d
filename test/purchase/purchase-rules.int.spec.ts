import { randomBytes } from 'node:crypto';
import { dataSourceOptions, SaleEntity, SaleRepository } from '@flash-sale/db';
import {
  decidePurchase,
  DomainError,
  OrderNumberGenerator,
  PURCHASE_REFUSAL_CODES,
  SALE_STRATEGIES,
  type SaleStrategy,
} from '@flash-sale/domain';
import { onlyBucket, type RedisClient, ReservationScripts, SaleState } from '@flash-sale/redis';
import { DataSource } from 'typeorm';
import { StockStrategies } from '../../apps/api/src/purchase/strategies/stock-strategies';
import { SubmitTokens } from '../../apps/api/src/purchase/submit-tokens';
import {
  type CaseBuyer,
  PURCHASE_RULE_CASES,
  type PurchaseOutcome,
  type PurchaseRuleCase,
} from '../../libs/domain/src/purchase-rules.cases';
import { issueTestToken } from '../support/private-redis';
import { type RunningStack, startStack } from '../support/running-stack';
import { createTestEnv, type TestEnv } from '../support/test-env';
import { createTestRedis } from '../support/test-redis';

const HOUR = 3_600_000;

/** Start and end of a case's window as it stands when alice buys. */
function windowOf(testCase: PurchaseRuleCase, now = Date.now()): { startsAt: Date; endsAt: Date } {
  if (testCase.window === 'not-started') return { startsAt: new Date(now + HOUR), endsAt: new Date(now + 2 * HOUR) };
  if (testCase.window === 'ended') return { startsAt: new Date(now - 2 * HOUR), endsAt: new Date(now - 60_000) };
  return { startsAt: new Date(now - HOUR), endsAt: new Date(now + HOUR) };
}

/**
 * One way of selling, driven through a case: it sets up the sale, makes the earlier purchases its own
 * way, moves the window, and reports what alice's purchase got.
 */
interface Store {
  /** A live sale with its whole stock sellable; returns its id. */
  createSale(testCase: PurchaseRuleCase): Promise<string>;
  issueSubmitToken(saleId: string, buyer: CaseBuyer): Promise<string>;
  /** The outcome and, when accepted or replayed, the order number. */
  buy(saleId: string, buyer: CaseBuyer, submitToken: string, quantity: number): Promise<[PurchaseOutcome, string?]>;
  moveWindow(saleId: string, testCase: PurchaseRuleCase): Promise<void>;
}

async function judge(store: Store, testCase: PurchaseRuleCase): Promise<PurchaseOutcome> {
  const saleId = await store.createSale(testCase);
  const firstSubmitTokenOf = new Map<CaseBuyer, string>();
  for (const earlier of testCase.earlier) {
    const submitToken = await store.issueSubmitToken(saleId, earlier.buyer);
    const [outcome] = await store.buy(saleId, earlier.buyer, submitToken, earlier.quantity);
    if (outcome !== 'ACCEPT') throw new Error(`case set-up: an earlier purchase got ${outcome}`);
    if (!firstSubmitTokenOf.has(earlier.buyer)) firstSubmitTokenOf.set(earlier.buyer, submitToken);
  }
  if (testCase.window !== 'live') await store.moveWindow(saleId, testCase);
  const presented = testCase.purchase.submitToken;
  const submitToken =
    presented === 'fresh'
      ? await store.issueSubmitToken(saleId, 'alice')
      : presented === 'issued-to-bob'
        ? await store.issueSubmitToken(saleId, 'bob')
        : presented === 'unknown'
          ? `never-issued-${randomBytes(6).toString('hex')}`
          : firstSubmitTokenOf.get(presented === 'used-by-alice' ? 'alice' : 'bob')!;
  const [outcome] = await store.buy(saleId, 'alice', submitToken, testCase.purchase.quantity);
  return outcome;
}

/** The rules themselves, over an in-memory sale that keeps just the facts they ask for. */
function domainStore(): Store {
  interface MemorySale {
    stock: number;
    perUserLimit: number;
    startsAt: Date;
    endsAt: Date;
    unitsHeld: Map<string, number>;
    submitTokens: Map<string, { issuedTo: string; boughtBy?: string; orderNo?: string }>;
  }
  const sales = new Map<string, MemorySale>();
  const orderNumbers = new OrderNumberGenerator();
  return {
    async createSale(testCase) {
      const saleId = String(sales.size + 1);
      sales.set(saleId, {
        ...testCase.sale,
        ...windowOf({ ...testCase, window: 'live' }),
        unitsHeld: new Map(),
        submitTokens: new Map(),
      });
      return saleId;
    },
    async issueSubmitToken(saleId, buyer) {
      const submitToken = randomBytes(6).toString('hex');
      sales.get(saleId)!.submitTokens.set(submitToken, { issuedTo: buyer });
      return submitToken;
    },
    async buy(saleId, buyer, submitToken, quantity) {
      const sale = sales.get(saleId)!;
      const known = sale.submitTokens.get(submitToken);
      const decision = decidePurchase({
        userId: buyer,
        nowMs: Date.now(),
        startsAtMs: sale.startsAt.getTime(),
        endsAtMs: sale.endsAt.getTime(),
        submitToken: { issuedToBuyer: known?.issuedTo === buyer, boughtBy: known?.boughtBy },
        quantity,
        perUserLimit: sale.perUserLimit,
        unitsHeld: sale.unitsHeld.get(buyer) ?? 0,
        available: sale.stock,
      });
      if (decision.kind === 'refuse') return [decision.code];
      if (decision.kind === 'replay') return ['REPLAY', known!.orderNo];
      const orderNo = orderNumbers.next(saleId);
      sale.stock -= quantity;
      sale.unitsHeld.set(buyer, (sale.unitsHeld.get(buyer) ?? 0) + quantity);
      sale.submitTokens.set(submitToken, { issuedTo: buyer, boughtBy: buyer, orderNo });
      return ['ACCEPT', orderNo];
    },
    async moveWindow(saleId, testCase) {
      Object.assign(sales.get(saleId)!, windowOf(testCase));
    },
  };
}

/** reserve-9.lua on a real Redis, through ReservationScripts (its only caller). */
function redisStore(scripts: () => ReservationScripts, saleRedis: () => SaleState): Store {
  let nextSaleId = 1;
  const orderNumbers = new OrderNumberGenerator();
  const loadInput = (saleId: string, testCase: PurchaseRuleCase, window: { startsAt: Date; endsAt: Date }) => ({
    saleId,
    ...window,
    perUserLimit: testCase.sale.perUserLimit,
    stock: testCase.sale.stock,
    epoch: 1,
    windowVersion: 0,
  });
  return {
    async createSale(testCase) {
      const saleId = String(nextSaleId++);
      await scripts().load(
        onlyBucket(saleId),
        loadInput(saleId, testCase, windowOf({ ...testCase, window: 'live' })),
        [],
      );
      await scripts().grantLease(onlyBucket(saleId), 1, 'lease-1', testCase.sale.stock);
      return saleId;
    },
    async issueSubmitToken(saleId, buyer) {
      return (await issueTestToken(saleRedis(), saleId, buyer, 60)).token;
    },
    async buy(saleId, buyer, submitToken, quantity) {
      const result = await scripts().reserve({
        bucket: onlyBucket(saleId),
        userId: buyer,
        submitToken,
        quantity,
        orderNo: orderNumbers.next(saleId),
      });
      if (result.kind === 'reserved') return ['ACCEPT', result.orderNo];
      if (result.kind === 'replayed') return ['REPLAY', result.orderNo];
      if (result.kind === 'refused') return [result.code as PurchaseOutcome];
      throw new Error(`unexpected reserve result ${JSON.stringify(result)}`);
    },
    async moveWindow(saleId, testCase) {
      // Same incarnation: a refresh, which rewrites the window and keeps everything sold.
      await scripts().load(onlyBucket(saleId), loadInput(saleId, testCase, windowOf(testCase)), []);
    },
  };
}

/** A strategy that sells from MySQL, as the API builds it, on a real MariaDB. */
function mysqlStore(strategy: SaleStrategy, db: () => DataSource, api: () => RunningStack['api']): Store {
  const orderOfSubmitToken = new Map<string, string>();
  return {
    async createSale(testCase) {
      const { startsAt, endsAt } = windowOf({ ...testCase, window: 'live' });
      // As the admin API does: a sale kept in segment rows has its stock put in them.
      const sale = await new SaleRepository(db()).create({
        name: 'rules',
        description: null,
        imageUrl: null,
        priceCents: 100,
        stock: testCase.sale.stock,
        perUserLimit: testCase.sale.perUserLimit,
        startsAt,
        endsAt,
        strategy,
        paymentTimeoutSeconds: 600,
        purpose: 'shop',
        buckets: 1,
        waitingRoom: null,
      });
      return sale.id;
    },
    async issueSubmitToken(saleId, buyer) {
      return api().get(SubmitTokens).sign(saleId, buyer).token;
    },
    async buy(saleId, buyer, submitToken, quantity) {
      const sale = await db().getRepository(SaleEntity).findOneByOrFail({ id: saleId });
      try {
        const { orderNo } = await api()
          .get(StockStrategies)
          .of(strategy)
          .sell(sale, buyer, { token: submitToken, quantity });
        const replayed = orderOfSubmitToken.get(submitToken) === orderNo;
        orderOfSubmitToken.set(submitToken, orderNo);
        return [replayed ? 'REPLAY' : 'ACCEPT', orderNo];
      } catch (error) {
        if (error instanceof DomainError) return [error.code as PurchaseOutcome];
        throw error;
      }
    },
    async moveWindow(saleId, testCase) {
      const { startsAt, endsAt } = windowOf(testCase);
      await db().query('UPDATE sales SET starts_at = ?, ends_at = ? WHERE id = ?', [startsAt, endsAt, saleId]);
    },
  };
}

/**
 * The purchase rules have one home (libs/domain purchase-rules.ts), one mirror (reserve-9.lua) and
 * users that gather their facts from MySQL (apps/api/src/purchase/strategies/mysql/mysql-purchases.ts). Every implementation must give every case
 * of purchase-rules.cases.ts its expected answer — the order of the checks included.
 */
describe('purchase rules: the same cases against every implementation', () => {
  let testEnv: TestEnv;
  let db: DataSource;
  let redis: RedisClient;
  let cleanupRedis: () => Promise<void>;
  let scripts: ReservationScripts;
  let saleRedis: SaleState;
  let stack: RunningStack;

  beforeAll(async () => {
    const testRedis = createTestRedis();
    ({ redis, cleanup: cleanupRedis } = testRedis);
    scripts = new ReservationScripts(redis, testRedis.keys);
    saleRedis = new SaleState(redis, testRedis.keys);
    testEnv = await createTestEnv();
    db = new DataSource(dataSourceOptions({ url: testEnv.config.database.url, poolSize: 2 }));
    await db.initialize();
    stack = await startStack(testEnv.config, { worker: false });
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    await testEnv?.cleanup();
    await cleanupRedis?.();
  });

  const stores: [string, Store][] = [
    ['purchase-rules.ts (the rules themselves)', domainStore()],
    [
      'reserve-9.lua on Redis',
      redisStore(
        () => scripts,
        () => saleRedis,
      ),
    ],
    // Every other strategy of the contract's list sells from MySQL: each is judged as the API runs it.
    ...SALE_STRATEGIES.filter((strategy) => strategy !== 'redis-lua').map((strategy): [string, Store] => [
      `${strategy} on MySQL`,
      mysqlStore(
        strategy,
        () => db,
        () => stack.api,
      ),
    ]),
  ];

  describe.each(stores)('%s', (_name, store) => {
    it.each(PURCHASE_RULE_CASES.map((testCase) => [testCase.name, testCase] as const))(
      '%s',
      async (_caseName, testCase) => {
        expect(await judge(store, testCase)).toBe(testCase.expected);
      },
    );
  });

  it('covers every answer the rules can give', () => {
    const outcomes = new Set(PURCHASE_RULE_CASES.map((testCase) => testCase.expected));
    expect([...outcomes].sort()).toEqual(['ACCEPT', 'REPLAY', ...PURCHASE_REFUSAL_CODES].sort());
  });
});
