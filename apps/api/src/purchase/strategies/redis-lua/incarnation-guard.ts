import { StockLeases } from '@flash-sale/stock';
import { RedisConnection } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';

/** How far apart the clocks of the API processes may be (NTP keeps them within milliseconds). */
const CLOCK_MARGIN_MS = 10_000;

/**
 * When this instance's Redis connection drops and comes back (Redis restarted, or a failover moved it to
 * a replica; in a cluster, also when one master is lost or replaced: RedisConnection.onConnectionLost),
 * the Redis it now talks to may hold no state or a stale copy of a sale — which would sell units MySQL
 * already saw converted. Before a sale sells again here, its incarnation is verified once
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
  /** When this instance's current connection to Redis became ready (ms); infinite while there is none. */
  private connectedSince = Number.POSITIVE_INFINITY;

  constructor(
    private readonly redis: RedisConnection,
    private readonly leases: StockLeases,
  ) {}

  onModuleInit(): void {
    if (this.redis.isReady) this.connectedSince = Date.now();
    const current = (): void => {
      if (this.connectedSince === Number.POSITIVE_INFINITY) this.connectedSince = Date.now();
    };
    this.redis.onReady(current);
    // A cluster client stays ready across one master's failover: it is back when its slot map is.
    this.redis.onReconnect(current);
    // Armed when the connection drops, not when it comes back: ioredis sends the commands queued
    // meanwhile as soon as it reconnects, before anyone hears of it, and a purchase queued then must
    // already wait for the verification.
    this.redis.onConnectionLost(() => {
      this.reconnected = true;
      this.drops += 1;
      this.verified.clear();
      this.connectedSince = Number.POSITIVE_INFINITY;
    });
  }

  /**
   * Whether the Redis this instance talks to may lack a purchase made with a token issued at
   * `issuedAtMs` (docs/failure-model.md "Refusals are cheap"). Any copy of Redis that loses data — a
   * restart, an older copy, a promoted replica — drops every connection to it, so the copy this instance
   * talks to has been the current one since at least `connectedSince`. A token issued after that was
   * stored in this copy, and so was any reservation made with it: this copy answers its replay itself.
   * Only a token issued before may have bought in a copy that was lost since. CLOCK_MARGIN_MS covers
   * the skew between the process that issued the token and this one.
   */
  mayLackPurchaseOf(issuedAtMs: number): boolean {
    return issuedAtMs < this.connectedSince + CLOCK_MARGIN_MS;
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
