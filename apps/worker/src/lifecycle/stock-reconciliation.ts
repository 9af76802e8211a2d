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
      const drift = await this.repairThenMeasure(saleId);
      if (drift !== undefined) drifts.set(saleId, drift);
      if (drift) this.logger.warn(`Sale ${saleId}: Redis and MySQL drift by ${drift} unit(s)`);
    }
    await this.saleRedis.publishDrift(drifts);
    return drifts;
  }

  /** One read of both ledgers; a second only when a repair changed Redis. */
  private async repairThenMeasure(saleId: string): Promise<number | undefined> {
    const [mysql, redis] = await Promise.all([this.saleBooks.read(saleId), this.saleRedis.snapshot(saleId)]);
    if (!mysql) return undefined;
    const reserved = new Set(redis.reservations.map((reservation) => reservation.orderNo));
    let repaired = 0;
    for (const row of mysql.rows) {
      if (RETURNED_STATUSES.includes(row.status) && reserved.has(row.orderNo) && !redis.returned.has(row.orderNo)) {
        if ((await this.scripts.release(saleId, row.orderNo)) === 'released') repaired += 1;
      }
    }
    const current = repaired > 0 ? await this.saleRedis.snapshot(saleId) : redis;
    if (!current.loaded) return undefined;
    return compareBooks({
      rows: mysql.rows,
      reservations: current.reservations,
      returnedInRedis: current.returned,
      redisRemaining: current.remaining,
      mysqlAvailable: mysql.available,
    }).drift;
  }
}
