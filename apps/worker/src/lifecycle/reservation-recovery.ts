import type { AppConfig } from '@flash-sale/config';
import { CREATE_ORDER_JOB, type CreateOrderJobData, createOrderJobId, createOrderJobOptions } from '@flash-sale/queue';
import { SaleRedisRepository } from '@flash-sale/redis';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { LIFECYCLE_CONFIG, ORDERS_QUEUE, WORKER_CONFIG } from '../worker.tokens';

const LOOKUP_CHUNK = 1000;

/**
 * Turns reservations that never became orders into orders. A reservation is made in Redis and its job
 * added right after; an API that dies in between leaves a reservation with no job. Every reservation
 * older than the grace period with no order row gets its `create-order` job (again): the job id is the
 * order number, so one that still exists is not duplicated, and a failed one is retried.
 */
@Injectable()
export class ReservationRecovery {
  private readonly logger = new Logger(ReservationRecovery.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly saleRedis: SaleRedisRepository,
    @Inject(ORDERS_QUEUE) private readonly ordersQueue: Queue<CreateOrderJobData>,
    @Inject(LIFECYCLE_CONFIG) private readonly config: AppConfig['lifecycle'],
    @Inject(WORKER_CONFIG) private readonly workerConfig: AppConfig['worker'],
  ) {}

  /** Returns how many reservations were handed back to the queue. */
  async run(): Promise<number> {
    const sales = (await this.dataSource.query(`SELECT id FROM sales WHERE strategy = 'redis-lua' AND ends_at > ? `, [
      new Date(Date.now() - 24 * 3_600_000),
    ])) as { id: string }[];
    let recovered = 0;
    for (const { id } of sales) recovered += await this.recoverSale(String(id));
    if (recovered > 0) this.logger.warn(`Recovered ${recovered} reservation(s) that had no order`);
    return recovered;
  }

  private async recoverSale(saleId: string): Promise<number> {
    const { reservations, returned } = await this.saleRedis.snapshot(saleId);
    const cutoff = Date.now() - this.config.recoveryGraceMs;
    // Epoch 0: an order MySQL sold itself, copied into Redis by a reload; its row exists already.
    const candidates = reservations.filter(
      (reservation) =>
        reservation.epoch > 0 && reservation.reservedAt.getTime() <= cutoff && !returned.has(reservation.orderNo),
    );
    let recovered = 0;
    for (let i = 0; i < candidates.length; i += LOOKUP_CHUNK) {
      const chunk = candidates.slice(i, i + LOOKUP_CHUNK);
      // Plain SQL: after a big sale nearly every reservation has its row, and TypeORM's entities for
      // all of them cost more than the lookup itself.
      const written = (await this.dataSource.query(
        `SELECT order_no FROM orders WHERE order_no IN (${chunk.map(() => '?').join(', ')})`,
        chunk.map((reservation) => reservation.orderNo),
      )) as { order_no: string }[];
      const writtenNos = new Set(written.map((row) => row.order_no));
      for (const reservation of chunk.filter((candidate) => !writtenNos.has(candidate.orderNo))) {
        const jobId = createOrderJobId(reservation.orderNo);
        const existing = await this.ordersQueue.getJob(jobId);
        if (existing && (await existing.isFailed())) {
          await existing.retry();
        } else if (!existing) {
          await this.ordersQueue.add(
            CREATE_ORDER_JOB,
            {
              orderNo: reservation.orderNo,
              saleId,
              userId: reservation.userId,
              quantity: reservation.quantity,
              slot: reservation.slot,
              reservedAt: reservation.reservedAt.toISOString(),
              epoch: reservation.epoch,
            },
            { ...createOrderJobOptions(this.workerConfig.jobAttempts), jobId },
          );
        } else {
          continue; // waiting or running: it will write the order itself
        }
        recovered += 1;
      }
    }
    return recovered;
  }
}
