import type { SaleLeaseRow, StockLeaseRepository } from '@flash-sale/db';
import {
  bucketsOf,
  type GrantResult,
  type ReservationScripts,
  type SaleActivity,
  type SaleBucket,
  type SaleState,
} from '@flash-sale/redis';
import type { LeasePolicy } from './lease-policy';
import { markSaleChanged } from './sale-marks';
import { hasEnded, isRedisBacked, layoutOf } from './sale-lease-row';

/**
 * One lease, both halves: the MySQL transaction that moves units from `available` to `leased` under a
 * ledger row, then the idempotent Redis grant of that row's id to the bucket on the sale's incarnation.
 */
export class LeaseGrants {
  constructor(
    private readonly repository: StockLeaseRepository,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleState,
    private readonly policy: LeasePolicy,
    private readonly activity?: SaleActivity,
  ) {}

  /**
   * Leases up to one lease's worth of `available` units to the given bucket (or the one with the smallest
   * balance). `spread`: a bucket's own lease takes only its share of the last units. Returns the units
   * Redis received.
   */
  async lease(saleId: string, bucketIndex?: number, spread = true): Promise<number> {
    const sale = await this.repository.saleRow(saleId);
    if (!isRedisBacked(sale)) return 0;
    if (sale.available === 0 || hasEnded(sale)) return 0;
    const buckets = bucketsOf(layoutOf(saleId, sale));
    const bucket = buckets[bucketIndex ?? (await this.emptiestBucket(saleId, sale))] ?? buckets[0]!;
    // Units given back to MySQL (a cancel, an expiry) all go to the emptiest bucket; a bucket's own
    // top-up takes its share of what is left, so the last units are spread.
    const lease = await this.repository.lease(
      saleId,
      sale.redisEpoch,
      this.policy.leaseSize,
      bucket.index,
      spread && bucketIndex !== undefined,
    );
    if (!lease) return 0;
    return (await this.grant(bucket, lease.leaseId, lease.epoch, lease.units)) === 'wrong-epoch' ? 0 : lease.units;
  }

  /** Grants again the leases MySQL made for the incarnation that Redis never confirmed. */
  async regrantPending(saleId: string, epoch: number): Promise<number> {
    const pending = await this.repository.leasesOf(saleId, epoch, 'PENDING');
    if (pending.length === 0) return 0;
    const sale = await this.repository.saleRow(saleId);
    if (!sale) return 0;
    const buckets = bucketsOf(layoutOf(saleId, sale));
    let granted = 0;
    for (const lease of pending) {
      const bucket = buckets[lease.bucket];
      if (!bucket) continue;
      // Only units this call added count: a lease whose owner granted it a moment ago (and has not
      // marked it yet) is no repair, and counting it would make the caller lease again.
      if ((await this.grant(bucket, lease.leaseId, epoch, lease.units)) === 'granted') granted += lease.units;
    }
    return granted;
  }

  /** The bucket with the smallest balance (0 for a sale with one). */
  private async emptiestBucket(saleId: string, sale: SaleLeaseRow): Promise<number> {
    if (sale.buckets === 1) return 0;
    const balances = await this.saleRedis.balances(layoutOf(saleId, sale));
    let emptiest = 0;
    balances.forEach((balance, index) => {
      if ((balance ?? 0) < (balances[emptiest] ?? 0)) emptiest = index;
    });
    return emptiest;
  }

  /** The Redis half of a lease. A refused grant (Redis on another incarnation) stays PENDING, in MySQL. */
  private async grant(bucket: SaleBucket, leaseId: string, epoch: number, units: number): Promise<GrantResult['kind']> {
    const result = await this.scripts.grantLease(bucket, epoch, leaseId, units);
    if (result.kind === 'wrong-epoch') return result.kind;
    await this.repository.markGranted(leaseId);
    await markSaleChanged(this.activity, bucket.saleId);
    return result.kind;
  }
}
