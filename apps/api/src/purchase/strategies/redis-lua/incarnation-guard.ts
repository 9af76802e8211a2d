import { StockLeases } from '@flash-sale/stock';
import { RedisConnection } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';

/**
 * When this instance's Redis connection drops and comes back (Redis restarted, or a failover moved it to a
 * replica), the Redis it now talks to may hold no state or a stale copy of a sale — which would sell
 * units MySQL already saw converted. Before a sale sells again here, its incarnation is verified once
 * (StockLeases.verifyIncarnation) and, if lost, restarted on fresh leases. Until the first reconnect
 * this costs the purchase path one boolean test.
 */
@Injectable()
export class IncarnationGuard implements OnModuleInit {
  private readonly logger = new Logger(IncarnationGuard.name);
  private reconnected = false;
  /** Connections lost so far: a verification counts only for the connection it ran on. */
  private drops = 0;
  private readonly verified = new Set<string>();
  private readonly verifying = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly leases: StockLeases,
  ) {}

  onModuleInit(): void {
    // Armed when the connection drops, not when it comes back: ioredis sends the commands queued
    // meanwhile as soon as it reconnects, before anyone hears of it, and a purchase queued then must
    // already wait for the verification.
    this.redis.onConnectionLost(() => {
      this.reconnected = true;
      this.drops += 1;
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
    const drops = this.drops;
    const started = this.leases
      .verifyIncarnation(saleId)
      .then((outcome) => {
        if (outcome === 'restarted') this.logger.warn(`Sale ${saleId}: Redis came back without its state; restarted`);
        if (drops === this.drops) this.verified.add(saleId);
      })
      .finally(() => this.verifying.delete(saleId));
    this.verifying.set(saleId, started);
    return started;
  }
}
