import { SaleBooksRepository } from '@flash-sale/db';
import { compareBooks, RETURNED_STATUSES } from '@flash-sale/domain';
import { ReservationScripts, SaleRedisRepository } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/**
 * Compares Redis and MySQL for every live sale and publishes the drift (0 when they agree) for
 * /metrics and the audit. First it repairs the one gap it can close safely: orders MySQL already took
 * back (cancelled, expired, failed) whose unit Redis never got — a process that died between its
 * commit and the release script. The script makes that repair exactly-once.
 */
@Injectable()
export class StockReconciliation {
  private readonly logger = new Logger(StockReconciliation.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly saleBooks: SaleBooksRepository,
    private readonly saleRedis: SaleRedisRepository,
    private readonly scripts: ReservationScripts,
  ) {}

  /** Returns the drift per sale it published. */
  async run(): Promise<Map<string, number>> {
    const sales = (await this.dataSource.query(`SELECT id FROM sales WHERE strategy = 'redis-lua' AND ends_at > ?`, [
      new Date(Date.now() - 3_600_000),
    ])) as { id: string }[];
    const drifts = new Map<string, number>();
    for (const { id } of sales) {
      const saleId = String(id);
      await this.repairReturns(saleId);
      const drift = await this.measure(saleId);
      if (drift !== undefined) drifts.set(saleId, drift);
      if (drift) this.logger.warn(`Sale ${saleId}: Redis and MySQL drift by ${drift} unit(s)`);
    }
    await this.saleRedis.publishDrift(drifts);
    return drifts;
  }

  private async repairReturns(saleId: string): Promise<void> {
    const [mysql, redis] = await Promise.all([this.saleBooks.read(saleId), this.saleRedis.snapshot(saleId)]);
    const reserved = new Set(redis.reservations.map((reservation) => reservation.orderNo));
    for (const row of mysql?.rows ?? []) {
      if (RETURNED_STATUSES.includes(row.status) && reserved.has(row.orderNo) && !redis.returned.has(row.orderNo)) {
        await this.scripts.release(saleId, row.orderNo);
      }
    }
  }

  private async measure(saleId: string): Promise<number | undefined> {
    const [mysql, redis] = await Promise.all([this.saleBooks.read(saleId), this.saleRedis.snapshot(saleId)]);
    if (!mysql || !redis.loaded) return undefined;
    return compareBooks({
      rows: mysql.rows,
      reservations: redis.reservations,
      returnedInRedis: redis.returned,
      redisRemaining: redis.remaining,
      mysqlAvailable: mysql.available,
    }).drift;
  }
}
