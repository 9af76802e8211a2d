import { type MovementLook, unitsWereMoving } from './units-moving';

/** A look during which nothing moved: no lease waiting, no new ledger row, every give-back applied. */
function quiet(): MovementLook {
  return {
    before: { lastRowId: 7, pendingLeases: 0 },
    after: { lastRowId: 7, pendingLeases: 0 },
    recordedGiveBacks: ['s:1:a', 's:0:b'],
    appliedGiveBacks: new Set(['s:0:b', 's:1:a']),
  };
}

describe('unitsWereMoving', () => {
  it('is false when nothing moved: the sale is proven sold out', () => {
    expect(unitsWereMoving(quiet())).toBe(false);
    expect(unitsWereMoving({ ...quiet(), recordedGiveBacks: [], appliedGiveBacks: new Set() })).toBe(false);
  });

  it('sees a lease that was waiting for its grant when the look began, granted by the time it ended', () => {
    expect(unitsWereMoving({ ...quiet(), before: { lastRowId: 7, pendingLeases: 1 } })).toBe(true);
  });

  it('sees a ledger row added during the look (a lease, an applied give-back), even one granted at once', () => {
    expect(unitsWereMoving({ ...quiet(), after: { lastRowId: 8, pendingLeases: 0 } })).toBe(true);
  });

  it('sees a give-back recorded in a bucket that MySQL has not applied', () => {
    expect(unitsWereMoving({ ...quiet(), recordedGiveBacks: ['s:1:a', 's:0:b', 's:2:c'] })).toBe(true);
  });

  it('sees it even when MySQL applied more give-backs than Redis remembers (Redis restarted empty)', () => {
    const look = { ...quiet(), recordedGiveBacks: ['s:2:new'] };
    expect(look.appliedGiveBacks.size).toBeGreaterThan(look.recordedGiveBacks.length);
    expect(unitsWereMoving(look)).toBe(true);
  });
});
