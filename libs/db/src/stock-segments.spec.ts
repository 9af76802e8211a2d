import { segmentFor, segmentSizes, STOCK_SEGMENTS } from './stock-segments';

describe('stock segments', () => {
  it.each([1, 3, 8, 50, 51, 1_000, 10_000_000])(
    '%i units split into at most STOCK_SEGMENTS near-equal rows',
    (stock) => {
      const sizes = segmentSizes(stock);
      expect(sizes.reduce((sum, units) => sum + units, 0)).toBe(stock);
      expect(sizes).toHaveLength(Math.min(STOCK_SEGMENTS, stock));
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      expect(Math.min(...sizes)).toBeGreaterThan(0);
    },
  );

  it('hashes a buyer to the same segment every time, and spreads buyers over all of them', () => {
    const buyers = Array.from({ length: 8_000 }, (_, i) => `u_01JBUYER${i}`);
    expect(buyers.map((buyer) => segmentFor(buyer, 8))).toEqual(buyers.map((buyer) => segmentFor(buyer, 8)));
    const perSegment = new Array<number>(8).fill(0);
    for (const buyer of buyers) perSegment[segmentFor(buyer, 8)]! += 1;
    // Uniform would be 1,000 each; a hash that clusters buyers would make one segment as hot as one row.
    for (const count of perSegment) expect(count).toBeGreaterThan(800);
    expect(segmentFor('anyone', 1)).toBe(0);
  });
});
