import { isSaleId, WARM_UP_SALE_ID } from '@flash-sale/domain';
import { isRehearsalSale, newRehearsalSaleId, rehearsalSaleFor, WARM_UP_CALLER_ID } from './warm-up-caller';

describe('the warm-up rehearsal sale', () => {
  it('gets ids a sale may have but none is ever given, below the unknown sale of the warm-up', () => {
    for (let i = 0; i < 1_000; i++) {
      const id = newRehearsalSaleId();
      expect(isSaleId(id)).toBe(true);
      expect(isRehearsalSale(id)).toBe(true);
      expect(BigInt(id)).toBeLessThan(BigInt(WARM_UP_SALE_ID));
      expect(BigInt(id)).toBeGreaterThan(9_223_372_036_000_000_000n);
    }
  });

  it('is no other id: not the unknown sale, not a real sale, not a number beyond BIGINT', () => {
    for (const id of [WARM_UP_SALE_ID, '1', '42', '922337203685400000', '9223372036853999999', '9999999999999999999']) {
      expect(isRehearsalSale(id)).toBe(false);
    }
  });

  it('exists for the warm-up callers only', () => {
    const id = newRehearsalSaleId();
    expect(rehearsalSaleFor(id, WARM_UP_CALLER_ID)).toMatchObject({ id, strategy: 'redis-lua', buckets: 1 });
    expect(rehearsalSaleFor(id, `${WARM_UP_CALLER_ID}-7`)?.id).toBe(id);
    expect(rehearsalSaleFor(id, 'u_01JABCDEF')).toBeUndefined();
    expect(rehearsalSaleFor('42', WARM_UP_CALLER_ID)).toBeUndefined();
  });
});
