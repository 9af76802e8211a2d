import calculateSlot from 'cluster-key-slot';
import { bucketsOf, bucketTag, buyerBucket, KeyBuilder, MAX_SALE_BUCKETS } from './sale-keys';

const SLOTS = 16_384;

describe('sale buckets', () => {
  it('keeps the keys of a sale with one bucket exactly as they always were', () => {
    const keys = new KeyBuilder('fs').bucket({ saleId: '42', index: 0, count: 1 });
    expect(keys.stock).toBe('fs:{sale:42}:stock');
    expect(keys.handoff).toBe('fs:{sale:42}:handoff');
    expect(new KeyBuilder('fs').sale('42').all()).toEqual(keys.all());
  });

  it.each([2, 3, 4, 7, MAX_SALE_BUCKETS])(
    'puts bucket i of %i in the i-th part of the slot space, for every sale',
    (count) => {
      for (let saleId = 1; saleId <= 500; saleId++) {
        for (const bucket of bucketsOf({ id: String(saleId), buckets: count })) {
          const slot = calculateSlot(bucketTag(bucket));
          expect(slot).toBeGreaterThanOrEqual(Math.floor((bucket.index * SLOTS) / count));
          expect(slot).toBeLessThan(Math.floor(((bucket.index + 1) * SLOTS) / count));
        }
      }
    },
  );

  it('gives every key of a bucket the same slot', () => {
    const keys = new KeyBuilder('fs').bucket({ saleId: '9', index: 2, count: 3 });
    const slots = new Set(
      [...keys.all(), keys.token('t'), keys.purchaseRateLimitOf('u'), keys.purchaseRateLimit].map(calculateSlot),
    );
    expect(slots.size).toBe(1);
  });

  it('routes a buyer always to the same bucket, and buyers evenly over the buckets', () => {
    const sale = { id: '5', buckets: 3 };
    const counts = [0, 0, 0];
    for (let i = 0; i < 30_000; i++) {
      const bucket = buyerBucket(sale, `user-${i}`);
      expect(buyerBucket(sale, `user-${i}`)).toEqual(bucket);
      counts[bucket.index]! += 1;
    }
    for (const count of counts) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });
});
