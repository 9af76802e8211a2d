import { CHART_SECONDS, peakSecond, purchasesPerSecond, purchasesText, totalPurchases } from './purchases-per-second';
import { makeDashboard } from './test-fixtures';

const at = (second: number, ms = 0) => new Date(Date.UTC(2030, 0, 15, 10, 1, second, ms)).toISOString();

describe('purchasesPerSecond', () => {
  it("counts each whole second of the last minute from the sample's history, zeros included", () => {
    const sample = makeDashboard({
      sampledAt: at(10, 700), // 10:01:10.7: second 10 is still running
      history: [
        { at: at(7), purchases: 3 },
        { at: at(9), purchases: 40 },
        { at: at(10), purchases: 2 },
      ],
    });
    const seconds = purchasesPerSecond(sample);

    expect(seconds).toHaveLength(CHART_SECONDS);
    expect(seconds.at(-1)).toEqual({ at: Date.parse(at(9)), purchases: 40 });
    expect(seconds.slice(-3).map((second) => second.purchases)).toEqual([3, 0, 40]); // 7, 8, 9
    expect(seconds[0]?.at).toBe(Date.parse(at(9)) - (CHART_SECONDS - 1) * 1_000);
    // Whole numbers, as counted: no second is shown as a fraction of a purchase.
    expect(seconds.every((second) => Number.isInteger(second.purchases))).toBe(true);
    expect(peakSecond(seconds)).toBe(40);
    expect(totalPurchases(seconds)).toBe(43);
  });

  it('leaves out seconds older than the window, and has zeros when the history is empty or absent', () => {
    const history = [{ at: at(0), purchases: 5 }];
    // Sampled at 10:02:00.2: the window is 10:01:00 to 10:01:59, so second 0 is its first.
    expect(totalPurchases(purchasesPerSecond(makeDashboard({ sampledAt: at(60, 200), history })))).toBe(5);
    const later = makeDashboard({ sampledAt: at(61, 200), history });
    expect(totalPurchases(purchasesPerSecond(later))).toBe(0);
    expect(totalPurchases(purchasesPerSecond(makeDashboard({ history: [] })))).toBe(0);
    expect(purchasesPerSecond(makeDashboard())).toHaveLength(CHART_SECONDS);
  });
});

it('names a count of purchases', () => {
  expect(purchasesText(1)).toBe('1 purchase');
  expect(purchasesText(3)).toBe('3 purchases');
  expect(purchasesText(1200)).toBe('1,200 purchases');
});
