import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { SaleStockRow } from '@flash-sale/db';
import { errorMessage, type HandedOffOrder, WARM_UP_SALE_ID } from '@flash-sale/domain';
import { Injectable, Logger } from '@nestjs/common';
import { OrderWriter } from './order-writer';

/** A sale row, never written, with units for every made-up order of WARM_UP_SALE_ID, on incarnation 1. */
const WARM_UP_SALE_ROW: SaleStockRow = {
  stock: Number.MAX_SAFE_INTEGER,
  available: 0,
  leased: Number.MAX_SAFE_INTEGER,
  inDoubt: 0,
  redisEpoch: 1,
  settledEpoch: 0,
  priceCents: 100,
  version: 0,
  paymentTimeoutSeconds: 900,
};

/**
 * The worker's half of the opening second (docs/performance.md, "The opening second"): before it says
 * it consumes, the worker runs its write path — WARM_UP_REQUESTS made-up orders in batches of
 * ORDER_BATCH_SIZE, each batch one transaction with the real statements (read the sale row, look for
 * written orders, the multi-row insert, the optimistic update), rolled back at its end. MySQL's pool is
 * open and the code compiled when the sale's first orders arrive; nothing is ever committed.
 */
@Injectable()
export class WritePathWarmUp {
  private readonly logger = new Logger(WritePathWarmUp.name);
  private readonly orders: number;
  private readonly batchSize: number;

  constructor(
    private readonly writer: OrderWriter,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.orders = config.ops.warmUpRequests;
    this.batchSize = config.worker.batchSize;
  }

  /** Never throws: a worker that could not warm up (MySQL down) still consumes, cold. */
  async run(): Promise<void> {
    if (this.orders === 0) return;
    const startedAt = Date.now();
    let written = 0;
    try {
      while (written < this.orders) {
        const batch = madeUpOrders(written, Math.min(this.batchSize, this.orders - written));
        await this.writer.writeRolledBack(WARM_UP_SALE_ROW, batch);
        written += batch.length;
      }
      this.logger.log(`Write path warmed: ${written} orders written and rolled back in ${Date.now() - startedAt} ms`);
    } catch (error) {
      this.logger.warn(`Warm-up stopped after ${written} orders, consuming anyway: ${errorMessage(error)}`);
    }
  }
}

/** Order numbers no order has (real ones are digits), unique among this process's warm-up batches. */
function madeUpOrders(from: number, count: number): HandedOffOrder[] {
  return Array.from({ length: count }, (_, i) => ({
    orderNo: `warm-up-${process.pid}-${from + i}`,
    saleId: WARM_UP_SALE_ID,
    userId: `warm-up-${from + i}`,
    quantity: 1,
    slot: 0,
    reservedAt: new Date(),
    epoch: 1,
    submitToken: null,
    bucket: 0,
  }));
}
