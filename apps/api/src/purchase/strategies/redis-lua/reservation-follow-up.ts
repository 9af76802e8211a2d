import { errorMessage, type SaleLayout } from '@flash-sale/domain';
import { StockLeases } from '@flash-sale/stock';
import type { ReserveResult, SaleBucket } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { LoadShedder } from '../../../protection/load-shedder';
import { DurableAck } from '../../../durability/durable-ack';
import { WriteOrdersNudge } from './write-orders-nudge';

export type Reserved = Extract<ReserveResult, { kind: 'reserved' | 'replayed' }>;

/**
 * What a reservation needs after it, before its 202 is given: the nudge of the sale's order writer, the
 * next lease before the bucket runs dry, the backlog the load shedder watches, and the replica's
 * acknowledgement (DURABLE_ACK).
 */
@Injectable()
export class ReservationFollowUp {
  private readonly logger = new Logger(ReservationFollowUp.name);

  constructor(
    private readonly leases: StockLeases,
    private readonly writers: WriteOrdersNudge,
    private readonly shedder: LoadShedder,
    private readonly durableAck: DurableAck,
  ) {}

  /** Where the bucket's next write goes, for `complete` to confirm there (DurableAck.masterNow). */
  masterOf(bucket: SaleBucket): string | undefined {
    return this.durableAck.masterNow(bucket);
  }

  /** `writtenOn`: masterOf(bucket) as the reservation script was sent. */
  async complete(sale: SaleLayout, bucket: SaleBucket, result: Reserved, writtenOn?: string): Promise<void> {
    this.shedder.noteBacklog(bucket, result.backlog);
    // A replay nudges too: its order may still be waiting (the first answer was a 503, or lost).
    await this.writers.nudge(sale);
    if (result.balance < this.leases.policy.lowWater) {
      // The next lease, before Redis runs dry: buyers never wait on MySQL in the common case.
      this.leases.topUp(sale.id, bucket.index).catch((error: unknown) => {
        this.logger.warn(`Sale ${sale.id}: lease top-up failed: ${errorMessage(error)}`);
      });
    }
    if (this.durableAck.enabled) await this.durableAck.confirm(bucket, writtenOn);
  }
}
