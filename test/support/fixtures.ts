import { issueTestToken } from './private-redis';
import { type HandedOffOrder, OrderNumberGenerator } from '@flash-sale/domain';
import { StockLeases } from '@flash-sale/stock';
import { StockLeaseRepository } from '@flash-sale/db';
import { onlyBucket, type ReservationScripts, type SaleState } from '@flash-sale/redis';
import type { DataSource } from 'typeorm';

const HOUR = 3_600_000;

export interface SaleFixture {
  stock: number;
  perUserLimit?: number;
  priceCents?: number;
  /** Redis buckets (1 unless given). */
  buckets?: number;
  /** Units per lease when it is loaded (the whole stock unless given: every bucket takes its share). */
  leaseSize?: number;
  /** `false`: the row alone, its first incarnation not opened yet (MySQL's epoch 0, nothing in Redis). */
  opened?: boolean;
}

/**
 * A live redis-lua sale written straight to MySQL and loaded into Redis with its whole stock leased
 * (or each bucket one lease of `leaseSize`), as the admin API would.
 */
export async function createLiveSale(
  db: DataSource,
  scripts: ReservationScripts,
  saleRedis: SaleState,
  sale: SaleFixture,
): Promise<string> {
  const startsAt = new Date(Date.now() - HOUR);
  const endsAt = new Date(Date.now() + HOUR);
  const perUserLimit = sale.perUserLimit ?? 1;
  const result = (await db.query(
    `INSERT INTO sales (name, price_cents, stock, available, per_user_limit, starts_at, ends_at, strategy, payment_timeout_seconds, buckets)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'redis-lua', 600, ?)`,
    [
      'fixture sale',
      sale.priceCents ?? 1000,
      sale.stock,
      sale.stock,
      perUserLimit,
      startsAt,
      endsAt,
      sale.buckets ?? 1,
    ],
  )) as { insertId: number };
  const saleId = String(result.insertId);
  if (sale.opened === false) return saleId;
  const leases = new StockLeases(new StockLeaseRepository(db), scripts, saleRedis, {
    leaseSize: sale.leaseSize ?? sale.stock,
    lowWater: 0,
  });
  await leases.openNewSale(saleId);
  return saleId;
}

/** Reserves one unit for each of `count` fresh users through the real script; returns the job payloads. */
export async function reserveForUsers(
  scripts: ReservationScripts,
  saleRedis: SaleState,
  saleId: string,
  count: number,
): Promise<HandedOffOrder[]> {
  const orderNumbers = new OrderNumberGenerator();
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const userId = `buyer${i}`;
      const { token } = await issueTestToken(saleRedis, saleId, userId, 300);
      const result = await scripts.reserve({
        bucket: onlyBucket(saleId),
        userId,
        submitToken: token,
        quantity: 1,
        orderNo: orderNumbers.next(saleId),
      });
      if (result.kind !== 'reserved') throw new Error(`fixture reservation refused: ${JSON.stringify(result)}`);
      return {
        orderNo: result.orderNo,
        saleId,
        userId,
        quantity: result.quantity,
        slot: result.slot,
        reservedAt: result.reservedAt,
        epoch: result.epoch,
        submitToken: token,
      };
    }),
  );
}

export async function countRows(db: DataSource, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = (await db.query(sql, params)) as { n: string | number }[];
  return Number(row?.n ?? 0);
}

export async function waitFor<T>(
  description: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`Timed out waiting for ${description}; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
