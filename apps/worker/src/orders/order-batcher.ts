import type { AppConfig } from '@flash-sale/config';
import type { CreateOrderJobData } from '@flash-sale/queue';
import { Inject, Injectable } from '@nestjs/common';
import { WorkerMetrics } from '../ops/worker-metrics';
import { WORKER_CONFIG } from '../worker.tokens';
import { OrderWriter, type WriteOutcome } from './order-writer';

interface Waiting {
  order: CreateOrderJobData;
  resolve: (outcome: WriteOutcome) => void;
  reject: (error: unknown) => void;
}

interface SaleLane {
  waiting: Waiting[];
  flushing: boolean;
}

/**
 * Group commit. Jobs being processed concurrently hand their order to the lane of their sale; one
 * transaction at a time per lane writes whatever has gathered (up to `batchSize`), and each job's
 * promise settles with its own outcome. Under load the batches grow by themselves, so the sale's hot
 * row is updated once per batch instead of once per order; when idle a lone order waits at most
 * `batchLingerMs`.
 */
@Injectable()
export class OrderBatcher {
  private readonly lanes = new Map<string, SaleLane>();

  constructor(
    private readonly writer: OrderWriter,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig['worker'],
    private readonly metrics: WorkerMetrics,
  ) {}

  submit(order: CreateOrderJobData): Promise<WriteOutcome> {
    return new Promise<WriteOutcome>((resolve, reject) => {
      const lane = this.lane(order.saleId);
      lane.waiting.push({ order, resolve, reject });
      if (lane.flushing) return;
      lane.flushing = true;
      const delay = lane.waiting.length >= this.config.batchSize ? 0 : this.config.batchLingerMs;
      setTimeout(() => void this.drain(order.saleId, lane), delay);
    });
  }

  private lane(saleId: string): SaleLane {
    let lane = this.lanes.get(saleId);
    if (!lane) {
      lane = { waiting: [], flushing: false };
      this.lanes.set(saleId, lane);
    }
    return lane;
  }

  private async drain(saleId: string, lane: SaleLane): Promise<void> {
    while (lane.waiting.length > 0) {
      const batch = lane.waiting.splice(0, this.config.batchSize);
      try {
        const outcomes = await this.writer.writeBatch(
          saleId,
          batch.map((waiting) => waiting.order),
        );
        this.metrics.observeCommitted(
          batch.map((waiting) => waiting.order),
          outcomes,
        );
        batch.forEach((waiting, i) => waiting.resolve(outcomes[i] ?? 'already-exists'));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    lane.flushing = false;
    this.lanes.delete(saleId);
  }
}
