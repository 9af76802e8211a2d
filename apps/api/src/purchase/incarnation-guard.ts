import { StockLeases } from '@flash-sale/db';
import { RedisConnection } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';

/**
 * When this instance's Redis connection comes back (Redis restarted, or a failover moved it to a
 * replica), the Redis it now talks to may hold no state or a stale copy of a sale — which would sell
 * units MySQL already saw converted. Before a sale sells again here, its incarnation is verified once
 * (StockLeases.verifyIncarnation) and, if lost, restarted on fresh leases. Until the first reconnect
 * this costs the purchase path one boolean test.
 */
@Injectable()
export class IncarnationGuard implements OnModuleInit {
  private readonly logger = new Logger(IncarnationGuard.name);
  private reconnected = false;
  private readonly verified = new Set<string>();
  private readonly verifying = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly leases: StockLeases,
  ) {}

  onModuleInit(): void {
    let connectedBefore = this.redis.isReady;
    this.redis.onReady(() => {
      if (!connectedBefore) {
        connectedBefore = true;
        return;
      }
      this.reconnected = true;
      this.verified.clear();
    });
  }

  /** True when the sale must be verified before this instance sells it again. */
  mustVerify(saleId: string): boolean {
    return this.reconnected && !this.verified.has(saleId);
  }

  verify(saleId: string): Promise<void> {
    const running = this.verifying.get(saleId);
    if (running) return running;
    const started = this.leases
      .verifyIncarnation(saleId)
      .then((outcome) => {
        if (outcome === 'restarted') this.logger.warn(`Sale ${saleId}: Redis came back without its state; restarted`);
        this.verified.add(saleId);
      })
      .finally(() => this.verifying.delete(saleId));
    this.verifying.set(saleId, started);
    return started;
  }
}
