import { addSample, formatRate, MAX_RATE_POINTS, peakRate } from './purchase-rate';
import { makeDashboard, makeSale } from './test-fixtures';

const at = (second: number) => new Date(Date.UTC(2030, 0, 15, 10, 0, second)).toISOString();
const sample = (second: number, purchases: number) => makeDashboard({ sampledAt: at(second), purchases });

describe('addSample', () => {
  it('gives no point for the first sample', () => {
    const history = addSample(undefined, sample(0, 5));
    expect(history.points).toEqual([]);
    expect(history.latest.purchases).toBe(5);
  });

  it("starts a reloaded page from the server's per-second history", () => {
    const first = makeDashboard({
      sampledAt: at(10),
      purchases: 7,
      history: [
        { at: at(7), purchases: 4 },
        { at: at(9), purchases: 3 },
      ],
    });
    const history = addSample(undefined, first);
    expect(history.points.map((point) => point.perSecond)).toEqual([4, 0, 3, 0]); // seconds 7, 8, 9, 10
    expect(history.windowStart).toBe(Date.parse(at(7)));
    expect(peakRate(history.points)).toBe(4);
  });

  it("divides the purchases' growth by the seconds between the samples", () => {
    let history = addSample(undefined, sample(0, 0));
    history = addSample(history, sample(2, 30)); // 30 in 2 s
    history = addSample(history, sample(3, 40)); // 10 in 1 s
    expect(history.points.map((point) => point.perSecond)).toEqual([15, 10]);
    expect(history.points[0]?.at).toBe(Date.parse(at(2)));
    expect(peakRate(history.points)).toBe(15);
  });

  it('ignores a repeated sample and starts over for another sale', () => {
    let history = addSample(undefined, sample(0, 0));
    history = addSample(history, sample(1, 10));
    expect(addSample(history, sample(1, 10)).points).toHaveLength(1);
    const other = makeDashboard({ sale: makeSale({ id: 's-2' }), sampledAt: at(2), purchases: 99 });
    expect(addSample(history, other).points).toEqual([]);
  });

  it(`keeps the last ${MAX_RATE_POINTS} points and moves the window's start with them`, () => {
    let history = addSample(undefined, sample(0, 0));
    for (let second = 1; second <= MAX_RATE_POINTS + 5; second++) history = addSample(history, sample(second, second));
    expect(history.points).toHaveLength(MAX_RATE_POINTS);
    expect(history.points[0]?.at).toBe(Date.parse(at(6)));
    expect(history.windowStart).toBe(Date.parse(at(5)));
  });
});

it('formats a rate to one decimal', () => {
  expect(formatRate(12.345)).toBe('12.3');
  expect(formatRate(40)).toBe('40');
});
