import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

/**
 * What the reconciliation job last measured of each sale: Redis against MySQL over the live leases, in
 * units (docs/architecture.md "Who owns the stock"). The worker's job writes it; /metrics and the audit
 * read it, so a drift is seen between two runs of the job.
 */
export class DriftBoard {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Records this run's drifts (saleId -> units); sales not measured keep their last value. */
  async publish(drifts: ReadonlyMap<string, number>): Promise<void> {
    if (drifts.size === 0) return;
    await this.client.hset(this.keys.reconciliation, Object.fromEntries(drifts));
  }

  /** Drops the sale's drift (a removed sale: nothing to measure any more). */
  async forget(saleId: string): Promise<void> {
    await this.client.hdel(this.keys.reconciliation, saleId);
  }

  /** Every sale's last published drift (saleId -> units). */
  async all(): Promise<Record<string, string>> {
    return this.client.hgetall(this.keys.reconciliation);
  }

  /** The sale's last published drift, if the job has measured it. */
  async of(saleId: string): Promise<number | undefined> {
    const value = await this.client.hget(this.keys.reconciliation, saleId);
    return value === null ? undefined : Number(value);
  }
}
